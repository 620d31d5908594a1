"use strict";
// A stand-in for what pbem/pages/js/tortuga1667.js needs of base.js (written at the same
// time in another worktree): P.ChoiceError, defined only if base.js has not. Dropped at merge.
(function (P) {
  if (!P.ChoiceError) {
    P.ChoiceError = class ChoiceError extends Error {
      constructor(message, code) {
        super(message);
        this.name = "ChoiceError";
        this.code = code || "refused";
      }
    };
  }
})(globalThis.PBEM = globalThis.PBEM || {});

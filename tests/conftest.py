"""Settings for the whole suite.

Hypothesis: no per-example deadline and no "too slow" health check. The suite must pass on a
busy 2-core machine (CI runs it beside other work); speed is measured by benchmarks/, never
by a test. What a property test checks is unchanged.
"""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "pbem", deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)
settings.load_profile("pbem")

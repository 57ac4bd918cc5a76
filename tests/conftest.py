"""Shared pytest configuration: hypothesis profile kept small so the suite stays fast."""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "dpnoise",
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
settings.load_profile("dpnoise")

"""Settings every test folder shares."""

from hypothesis import settings

# properties check what a decoder or planner answers, not how fast: a loaded 2-core machine (a Spark test beside
# them under xdist) made a 0.7 ms example take 325 ms and fail Hypothesis's 200 ms deadline
settings.register_profile("cdcsync", deadline=None)
settings.load_profile("cdcsync")

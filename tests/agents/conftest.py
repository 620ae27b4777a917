from ptbench.testing.fixtures import scripted_provider  # noqa: F401  (re-exported fixture)

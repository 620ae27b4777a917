from tests.support import scripted_provider  # noqa: F401  (re-exported fixture)

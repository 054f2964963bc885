"""paperbot's tests: a package, so that `tests.support` is this one and no installed `tests` shadows it."""

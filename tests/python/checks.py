"""A minimal test runner for the Python suites (pytest is not required): every test_* function of a
module runs; a failure prints its traceback; the exit status is the number of failures (capped)."""
import sys
import traceback


def run(module_globals):
    tests = [(name, fn) for name, fn in module_globals.items() if name.startswith("test_") and callable(fn)]
    failed = 0
    for name, fn in tests:
        try:
            fn()
            print(f"ok    {name}")
        except Exception:
            failed += 1
            print(f"FAIL  {name}")
            traceback.print_exc()
    print(f"{len(tests) - failed} of {len(tests)} passed")
    if not tests:
        print("no tests found")
        failed = 1
    sys.exit(min(failed, 100))


def raises(exception, fn, *args, **kwargs):
    """Calls fn; returns the exception it raised, which must be of that class."""
    try:
        fn(*args, **kwargs)
    except exception as e:
        return e
    raise AssertionError(f"{getattr(fn, '__name__', fn)} did not raise {exception.__name__}")

"""alone_hits.py - the hits of a program that replaced its image, held
against those of examples/sbrk-trim 8 traced alone (lib.sh's exec_setup
writes them to $OUT/alone.json), for t-e2e-exec and t-fork-exec.  From a
test's Python (run from the tree's top):

    sys.path.insert(0, "tests/lib")
    from alone_hits import expect_alone_hits
    expect_alone_hits(process["events"]["by_probe"], "tests/out/.../alone.json")
"""
import json


def expect_alone_hits(by, alone_json):
    """Assert that by (a report's or a process's events.by_probe) is
    sbrk-trim's alone, probe by probe; the assertion names the probes that
    differ, with (by's, alone's) hits."""
    alone = json.load(open(alone_json))["events"]["by_probe"]
    assert by == alone, {p: (by.get(p), alone.get(p)) for p in set(by) | set(alone)
                         if by.get(p) != alone.get(p)}

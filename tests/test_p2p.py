"""Point-to-point traffic: NCCL send/recv paired, the pipeline bubble.

Answers known by construction: hta-tracegen --pp P --microbatches M
(tools/tracegen_pipeline.c) simulates 1F1B with rendezvous semantics and
writes every pair's late sender, late receiver and transfer and every
rank's bubble per step beside the traces (DIR.truth.json), in integer
nanoseconds.
"""
import json

from common import *


def pipeline(pp=4, microbatches=6, extra=()):
    d = os.path.join(tmpdir(), "job")
    subprocess.run([TRACEGEN, "--pp", str(pp), "--microbatches", str(microbatches), "-o", d]
                   + list(extra), check=True)
    with open(d + ".truth.json") as f:
        return d, json.load(f)


def test_generator_bubble_is_the_closed_form_without_transfer_time():
    """With instantaneous transfers and equal stages, every stage idles
    (P-1)(F+B) of the step's (M+P-1)(F+B): 1F1B's bubble fraction."""
    for pp, m in ((4, 8), (3, 3), (2, 5)):
        _, truth = pipeline(pp, m, ["--transfer-us", "0"])
        want = (pp - 1) / (m + pp - 1)
        assert truth["closed_form_bubble_fraction"] == want
        for s in truth["steps"]:
            assert s["bubble_ns"] * (m + pp - 1) == s["step_time_ns"] * (pp - 1), (pp, m, s)


if __name__ == "__main__":
    main([v for k, v in sorted(globals().items()) if k.startswith("test_")])

"""The list of planted faults (tests/faults.yaml) is well-formed and still applies to this tree.

The faults themselves run in ``tests/plant_faults.py`` (minutes, not a test): here only that
the list is whole, covers every measurement, and that each ``find`` is in the searched folders
exactly once, so that the list does not rot as the code moves.
"""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

from mminfer.measurements import MEASUREMENTS

REPO = Path(__file__).resolve().parents[1]
PLANT = runpy.run_path(str(REPO / "tests" / "plant_faults.py"), run_name="plant_faults")
FAULTS = PLANT["load_faults"](REPO / "tests" / "faults.yaml")
KINDS = {
    "wrong_formula",
    "wrong_figure",
    "glance_disagrees",
    "direction_flipped",
    "cause_without_difference",
    "method_not_run",
    "case_list_against_tolerance",
    "inverted_claim",
    "flipped_template",
    "dropped_spread",
    "topp_off_by_one",
    "not_reseeded",
}


def test_the_list_holds_at_least_20_faults_with_unique_names():
    names = [fault["name"] for fault in FAULTS]
    assert len(names) >= 20
    assert len(set(names)) == len(names)


def test_every_fault_is_well_formed():
    for fault in FAULTS:
        assert set(fault) == set(PLANT["FIELDS"]), fault["name"]
        assert fault["kind"] in KINDS, fault["name"]
        for find, replace in PLANT["pairs"](fault):
            assert find and find != replace, fault["name"]
        tests = PLANT["test_args"](fault)
        # each test is here: plant_faults leaves out those a tree lacks, so a renamed one would
        # otherwise drop out of the list unseen
        assert tests and all(PLANT["present"](REPO, test) for test in tests), fault["name"]


def test_every_measurement_has_a_fault():
    names = {measurement.name for measurement in MEASUREMENTS}
    planted = {fault["measurement"] for fault in FAULTS}
    assert planted <= names
    assert names <= planted, sorted(names - planted)


@pytest.mark.parametrize("fault", FAULTS, ids=[fault["name"] for fault in FAULTS])
def test_its_find_occurs_exactly_once_in_this_tree(fault):
    PLANT["located"](REPO, fault)  # raises where no find, or more than one, is there once

"""The crash harness's kill schedule: round-robin over the steps, seeded moments."""

from __future__ import annotations

import pytest

from hbase_migrate.errors import HBaseMigrateError
from hbase_migrate.soak.crash_plan import STEPS, kill_schedule, per_step


def test_kills_go_round_the_steps_in_lifecycle_order() -> None:
    plan = kill_schedule(5, 20)
    # 20 kills over the 9 steps: two rounds, then the first two steps a third time
    assert per_step(plan) == {"prepare": 3, "snapshot": 3, "replay": 2, "follow": 2,
                              "validate-live": 2, "validate-part": 2, "validate-judge": 2,
                              "repair": 2, "cutover": 2}
    assert [k.step for k in plan[:9]] == ["prepare", "snapshot", "replay", "follow",
                                          "validate-live", "validate-part", "validate-judge",
                                          "repair", "cutover"]
    assert [(k.index, k.step, k.round) for k in plan[9:11]] == [(9, "prepare", 1),
                                                              (10, "snapshot", 1)]
    assert plan[19].round == 2


def test_the_same_seed_gives_the_same_moments_and_another_seed_others() -> None:
    assert kill_schedule(76, 50) == kill_schedule(76, 50)
    assert [k.fraction for k in kill_schedule(76, 50)] != \
        [k.fraction for k in kill_schedule(77, 50)]
    # a longer run begins with the shorter one's kills
    assert kill_schedule(76, 50)[:6] == kill_schedule(76, 6)


def test_moments_spread_over_the_step_and_parts_over_both() -> None:
    plan = kill_schedule(3, 300)
    fractions = [k.fraction for k in plan]
    assert all(0.05 <= f <= 0.95 for f in fractions)
    assert min(fractions) < 0.15 and max(fractions) > 0.85
    assert {k.part for k in plan} == {1, 2}
    assert plan[0].line() == f"#0 prepare (round 0) at {plan[0].fraction:.0%}"


def test_a_schedule_over_chosen_steps_and_its_refusals() -> None:
    plan = kill_schedule(1, 4, ("replay", "follow"))
    assert [k.step for k in plan] == ["replay", "follow", "replay", "follow"]
    assert kill_schedule(1, 0) == []
    with pytest.raises(HBaseMigrateError, match="no step"):
        kill_schedule(1, 3, ())
    with pytest.raises(HBaseMigrateError, match="-1 kills"):
        kill_schedule(1, -1)
    assert len(STEPS) == len(set(STEPS)) == 9

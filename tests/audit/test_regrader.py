"""Regrading recorded runs (no model call): every ground-truth grade, once per grader version."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.app.operations import submission
from engine.grading.regrade import Regrader
from engine.grading.router import RegistryGrader
from engine.plugins import forget, load_plugins
from engine.testing.harness import ExactGrader, make_settings, new_memory_log, run_until_done, services
from events import AnswerRegraded, TrajectorySealed
from events.record import Recorded
from handlers.catalog import builtin_catalog
from handlers.ports import Grade
from replay.audit.plan import GRADER_MISSING, NO_ANSWER, NO_GROUND_TRUTH
from replay.audit.regraded_rewards import regraded_rewards
from replay.run_table import run_row
from tests.episode.test_episode_flow import Replies
from tests.episode.test_protocols import ANSWER, TOOL, run_protocol
from tests.evolve.support import RoleModel, run_evolve_records, standard_reply
from tests.plugins.support import on_path, write_package


class ModeGrader:
    """A stand-in for the grading pool: ``exact`` compares text, any other mode calls everything right."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, str]] = []

    async def grade(self, answer: str, truth: str, mode: str, **_: Any) -> Grade:
        self.calls.append((answer, truth, mode))
        score = float(answer.strip() == truth.strip()) if mode == "exact" else 1.0
        return Grade(score=score, method=mode)


async def _reason_run(replies: list[str], truth: str | None = "5", run_id: str = "r-1") -> list[Recorded]:
    """A run graded live by ``math`` (which the stand-in pool calls right whatever the answer)."""
    log = new_memory_log()
    svc = services(make_settings({"episode": {"max_steps": 2, "grading": "math"}}), models=Replies(replies),
                   grader=RegistryGrader(ModeGrader()))
    await log.append(submission(run_id, "What is 2 + 3?", ground_truth=truth, data_source="toy"))
    await run_until_done(log, svc, [run_id])
    return list(await log.read_run(run_id))


async def _regrade(records: list[Recorded], name: str | None, pool: Any = None,
                   catalog: Any = None) -> tuple[Any, list[Recorded]]:
    log = new_memory_log()
    for record in records:
        await log.append(record.event)
    run_id = records[0].event.run_id
    stored = list(await log.read_run(run_id))
    regrader = Regrader(log, RegistryGrader(pool or ModeGrader(), catalog=catalog or builtin_catalog()), name=name)
    result = await regrader.regrade(run_id, stored, run_row(run_id, stored))
    return result, list(await log.read_run(run_id))


def _regrades(records: list[Recorded]) -> list[AnswerRegraded]:
    return [r.event for r in records if isinstance(r.event, AnswerRegraded)]


async def test_a_grade_is_computed_again_from_the_recorded_answer_and_recorded_once() -> None:
    """The recorded answer goes to the named grader; a second regrade at that version adds nothing."""
    records = await _reason_run(["<answer>\\boxed{5.0}</answer>"])
    first, after = await _regrade(records, "exact")
    [regraded] = _regrades(after)
    assert (regraded.answer, regraded.old_score, regraded.new_score, regraded.grader) == ("5.0", 1.0, 0.0, "exact")
    assert (regraded.reward, regraded.episode, regraded.old_grader) == (0.0, "main", "math")
    assert [o.status for o in first.outcomes] == ["regraded"] and first.outcomes[0].flip == "to_wrong"
    pool = ModeGrader()
    again, twice = await _regrade(after, "exact", pool)
    assert (len(_regrades(twice)), pool.calls, [o.status for o in again.outcomes]) == (1, [], ["already"])
    other, three = await _regrade(twice, "math")  # the run's own grader: it still stands
    assert len(_regrades(three)) == 2 and other.outcomes[0].new_score == 1.0


async def test_a_run_with_no_answer_records_nothing_and_keeps_its_zero() -> None:
    """An episode that ended without an answer has nothing to grade: skipped, counted as 0 both ways."""
    records = await _reason_run(["no tags at all", "still nothing"])
    result, after = await _regrade(records, "exact")
    assert (result.plan.skipped, _regrades(after)) == (NO_ANSWER, [])
    assert [(o.status, o.old_score, o.new_score) for o in result.outcomes] == [("kept", 0.0, 0.0)]


async def test_a_run_without_ground_truth_is_skipped() -> None:
    """A run without ground truth is skipped by the regrader and records no re-grade."""
    records = await _reason_run(["<answer>\\boxed{5}</answer>"], truth=None)
    result, after = await _regrade(records, "exact")
    assert (result.plan.skipped, result.outcomes, _regrades(after)) == (NO_GROUND_TRUTH, [], [])


async def test_a_grader_that_could_not_run_records_nothing_and_says_why() -> None:
    """A dead grading worker is not a grade: the line names the run; the next regrade tries again."""
    class Broken:
        async def grade(self, *args: Any, **kwargs: Any) -> Grade:
            return Grade(score=0.0, method="exact:error", detail="grading worker died")

    records = await _reason_run(["<answer>\\boxed{5}</answer>"])
    result, after = await _regrade(records, "exact", Broken())
    assert _regrades(after) == [] and result.outcomes == []
    assert result.failures == ["run r-1 (main): exact could not grade: grading worker died"]


async def test_a_run_graded_by_a_plugin_that_is_not_installed_names_it(tmp_path: Path) -> None:
    """Without --grader, a run graded by a missing plugin's grader is skipped, naming grader and plugin."""
    source = '''
        from engine.plugins import Grade, Plugin, grader

        @grader("lenient")
        def lenient(answer, ground_truth, metadata):
            return Grade(score=1.0, method="lenient")

        plugin = Plugin(name="lenient", graders=[lenient])
    '''
    site = write_package(tmp_path / "site", "apollo-lenient", {"apollo_lenient.py": source},
                         {"lenient": "apollo_lenient:plugin"})
    with on_path(site):
        settings = make_settings({"episode": {"grading": "lenient"}})
        catalog = load_plugins(settings).catalog()
        log = new_memory_log()
        svc = services(settings, models=Replies(["<answer>\\boxed{4}</answer>"]),
                       grader=RegistryGrader(ExactGrader(), catalog=catalog))
        await log.append(submission("r-p", "What is 2 + 3?", ground_truth="5"))
        await run_until_done(log, svc, ["r-p"])
        records = list(await log.read_run("r-p"))
    forget()
    result, after = await _regrade(records, None)
    assert result.plan.skipped == GRADER_MISSING and _regrades(after) == []
    assert "'lenient' from plugin 'lenient'" in result.plan.reason and "apollo-lenient" in result.plan.reason
    regraded, after = await _regrade(records, "exact")
    assert [o.flip for o in regraded.outcomes] == ["to_wrong"] and len(_regrades(after)) == 1


async def test_every_round_of_an_evolve_run_is_regraded_and_its_verifier_rewards_follow() -> None:
    """Each round's ground-truth grade is re-computed, naming its episode; a verifier's regraded
    reward flips with its round's grade (it was right when it agreed with the grade)."""
    model = RoleModel(standard_reply(answers=["41", "42"], verdicts=["0", "0", "1", "1", "1", "1"]))
    records = await run_evolve_records(model, evolve={"rounds": 2, "verifiers": 3, "aggregate": False})
    result, after = await _regrade(records, "lenient_everything")
    assert result.plan.skipped == GRADER_MISSING  # not a grader here: named, nothing recorded
    result, after = await _regrade(records, "math")  # the stand-in pool calls every answer right
    regrades = _regrades(after)
    assert sorted((r.episode, r.old_score, r.new_score) for r in regrades) == [
        ("r0.policy", 0.0, 1.0), ("r1.policy", 1.0, 1.0)]
    assert [o.flip for o in result.outcomes if o.episode == "r0.policy"] == ["to_correct"]
    sealed = {r.event.event_id: r.event for r in after if isinstance(r.event, TrajectorySealed)}
    rewards = regraded_rewards([r.event for r in after])
    round0 = {t.verifier: (t.score, rewards[i].score) for i, t in sealed.items()
              if t.role == "verifier" and t.round == 0}
    assert round0 == {0: (1.0, 0.0), 1: (1.0, 0.0), 2: (0.0, 1.0)}  # 0, 0, 1 against 41: now 42 is right
    assert all(rewards[i].reward == 1.0 for i, t in sealed.items() if t.role == "policy")


async def test_a_reference_protocol_regrade_hands_each_grader_what_it_would_have_read() -> None:
    """A whole-text grader reads every stepped reply again; any other grader the last reply's answer."""
    episode = await run_protocol([TOOL, ANSWER], "reference_test")
    for name, text in (("reference", TOOL + TOOL + ANSWER), ("exact", "42")):
        pool = ModeGrader()
        result, _ = await _regrade(list(episode.records), name, pool)
        assert [call[0] for call in pool.calls] == [text] and result.plan.skipped is None


async def test_a_regrade_reads_the_reply_with_todays_extraction() -> None:
    """A hedge recorded as its last box (how extraction read it before issue 30) is read again
    from the reply, so the regrade sees both boxes and the flip report shows them."""
    import msgspec

    from events import AnswerGraded

    records = await _reason_run(["<answer>\\boxed{41} \\quad (\\text{not } \\boxed{5})</answer>"])
    as_once_recorded = [
        msgspec.structs.replace(r, event=msgspec.structs.replace(r.event, answer="5"))
        if isinstance(r.event, AnswerGraded) else r
        for r in records
    ]
    result, after = await _regrade(as_once_recorded, "exact")
    [regraded] = _regrades(after)
    from handlers.grading import extract_final_answer

    # both boxes, each with what its sentence says of it (the second is denied)
    assert regraded.answer == extract_final_answer("<answer>\\boxed{41} \\quad (\\text{not } \\boxed{5})</answer>")
    assert regraded.answer.startswith("\\boxed{41} \\boxed{") and regraded.new_score == 0.0
    assert result.outcomes[0].answer == regraded.answer


async def test_a_regrade_hands_the_grader_the_problems_question_as_the_episode_did() -> None:
    """The regrade's metadata carries the question, as the live grading's does (counted nouns depend on it)."""
    from handlers.ports import QUESTION_KEY

    class MetadataPool(ModeGrader):
        def __init__(self) -> None:
            super().__init__()
            self.metadata: list[dict[str, Any]] = []

        async def grade(self, answer: str, truth: str, mode: str, **kwargs: Any) -> Grade:
            self.metadata.append(dict(kwargs.get("metadata") or {}))
            return await super().grade(answer, truth, mode)

    records = await _reason_run(["<answer>\\boxed{5}</answer>"])
    pool = MetadataPool()
    await _regrade(records, "exact", pool)
    assert [m.get(QUESTION_KEY) for m in pool.metadata] == ["What is 2 + 3?"]

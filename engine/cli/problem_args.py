"""Arguments shared by the commands that start runs: the problem, its source row, the policy model."""

from __future__ import annotations

import argparse
from typing import Any

import msgspec

from engine.config.settings import Settings, validate
from engine.console.argtypes import whole_number
from engine.datasets import DatasetError, load_problems
from engine.errors import EngineError
from events.base import is_valid_run_id
from handlers.workflows import DEFAULT_WORKFLOW, WORKFLOW_NAMES

positive_int = whole_number(1)
port = whole_number(1, 65535)


def add_problem_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("question", nargs="?", help="the problem text (or use --from-dataset)")
    parser.add_argument("--from-dataset", metavar="FILE", help="take the question and answer from a dataset file")
    parser.add_argument("--index", type=int, default=0, help="row of --from-dataset to use (default 0)")
    parser.add_argument("--answer", help="ground truth, used only for grading")
    parser.add_argument("--run-id", type=new_run_id_arg, help="run id to use (default: generated)")
    parser.add_argument("--workflow", default=DEFAULT_WORKFLOW, choices=WORKFLOW_NAMES)
    parser.add_argument("--max-steps", type=positive_int, help="step budget of the episode")
    add_model_arguments(parser)


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """The policy model of the runs a command starts, and the check of its endpoint."""
    parser.add_argument("--model", help="policy model name (or scripted:FILE)")
    parser.add_argument("--model-url", help="OpenAI-compatible base URL of the policy model")
    parser.add_argument("--max-tokens", type=positive_int,
                        help="policy completion tokens per reply (lowered to what the server can give)")
    parser.add_argument("--no-probe", action="store_true", help="do not check the model endpoint before submitting")


def new_run_id_arg(text: str) -> str:
    """A ``--run-id`` for a new run: refused as a usage error before anything starts when it cannot be one."""
    if not is_valid_run_id(text):
        msg = f"invalid run id {text!r}: use letters, digits, '-' and '_' only"
        raise argparse.ArgumentTypeError(msg)
    return text


def fill_from_dataset(args: argparse.Namespace) -> None:
    """``--from-dataset FILE --index N``: question, ground truth and source from a benchmark row."""
    if not getattr(args, "from_dataset", None):
        return

    try:
        load = load_problems(args.from_dataset, limit=args.index + 1 if args.index >= 0 else None)
    except DatasetError as exc:
        raise EngineError(str(exc)) from exc
    if not 0 <= args.index < len(load.problems):
        msg = f"--index {args.index} is out of range: {args.from_dataset} has {len(load.problems)} usable rows"
        raise EngineError(msg)
    problem = load.problems[args.index]
    if args.answer is not None and problem.ground_truth is not None and args.answer != problem.ground_truth:
        # the run would be recorded as this row, graded against another answer than the benchmark's
        msg = (f"--answer {args.answer!r} is not the ground truth of row {args.index} of {args.from_dataset} "
               f"({problem.ground_truth!r}): --from-dataset grades against the file's; drop --answer, or give "
               "the question itself")
        raise EngineError(msg)
    args.question = problem.question
    args.answer = problem.ground_truth if problem.ground_truth is not None else args.answer
    args.problem_id = problem.problem_id
    args.data_source = problem.data_source


def problem_fields(args: argparse.Namespace) -> dict[str, Any]:
    """Problem id and data source when the question came from a dataset."""
    fields = {}
    if getattr(args, "problem_id", None):
        fields["problem_id"] = args.problem_id
    if getattr(args, "data_source", None):
        fields["data_source"] = args.data_source
    return fields


def config_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The run settings the command line overrides (``--max-steps``)."""
    config: dict[str, Any] = {}
    if getattr(args, "max_steps", None):
        config["episode"] = {"max_steps": args.max_steps}
    return config


def apply_model_flags(settings: Settings, args: argparse.Namespace) -> Settings:
    """``--model`` / ``--model-url`` / ``--max-tokens`` replace the policy model's name, endpoint and reply length."""
    model = getattr(args, "model", None)
    url = getattr(args, "model_url", None)
    max_tokens = getattr(args, "max_tokens", None)
    if not (model or url or max_tokens):
        return settings
    policy = msgspec.to_builtins(settings.model_for("policy"))
    if url:
        policy["base_url"] = url
        if not model and policy["model"].startswith("scripted:"):
            policy["model"] = "default"
    if model:
        policy["model"] = model
    if max_tokens:
        policy["max_tokens"] = max_tokens
    models = {role: msgspec.to_builtins(spec) for role, spec in settings.models.items()}
    models["policy"] = policy
    raw = msgspec.to_builtins(settings)
    raw["models"] = models
    return validate(raw)

"""Engine-owned target options on the command line (`--flink-rest URL`, `--spark-master URL`).

Each engine declares its `target_options`; `with_target_options` adds every installed engine's
options to a command and hands the command only those of the engine it runs, as the engine's
constructor arguments. The commands themselves never name an engine.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import typer

from nexmark.engines import registry
from nexmark.errors import UsageError


def _param_name(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def with_target_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Offer every engine's target options on `command`, which must take `engine: str` and
    `target: dict`: it receives the chosen engine's given options as `{param: value}`."""
    options = registry.target_options()
    by_name = {_param_name(opt.flag): (engine, opt) for engine, opt in options}
    # Evaluated: the wrapper's __signature__ is taken as it is, and a string annotation would
    # lose its Annotated option (cli/options.py) to Typer.
    signature = inspect.signature(command, eval_str=True)
    kept = [p for name, p in signature.parameters.items() if name != "target"]
    added = [
        inspect.Parameter(
            name,
            inspect.Parameter.KEYWORD_ONLY,
            default=typer.Option(None, opt.flag, help=opt.help, metavar=opt.metavar),
            annotation=str,
        )
        for name, (_, opt) in by_name.items()
    ]
    kept = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in kept]

    @functools.wraps(command)
    def wrapper(**kwargs: Any) -> Any:
        given = {name: kwargs.pop(name) for name in by_name if name in kwargs}
        chosen = kwargs["engine"]
        target: dict[str, str] = {}
        if any(v is not None for v in given.values()):
            registry.engine_class(chosen)  # an unknown engine is the error to report first
        for name, value in given.items():
            if value is None:
                continue
            engine, opt = by_name[name]
            if engine != chosen:
                raise UsageError(f"{opt.flag} is an option of engine {engine}, not of {chosen}")
            target[opt.param] = value
        return command(**kwargs, target=target)

    wrapper.__signature__ = signature.replace(parameters=kept + added)  # type: ignore[attr-defined]
    return wrapper

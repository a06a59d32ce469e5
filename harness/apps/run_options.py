"""Run configs: the command line's options as pydantic models, shared by the CLI and the Python API.

    stateact suite tasks/ --config lh.yaml -c max_turns=60 --model openai/gpt-4o

A run config is a YAML or TOML file (a mapping) whose keys are the command's long options, with
`-` or `_` alike (`max-turns: 60`). `-c key=value` overrides one key (the value is read as YAML:
`-c network=true`, `-c max_cost=0.5`); options given on the command line override both. The keys
are validated once, by the command's model here (`RunOptions`, `SuiteOptionsModel`,
`BatchOptionsModel`; `extra="forbid"`), for the command line and for `harness.api` alike, so an
unknown key is refused by name in both, and `config_from_options` turns the result into the
`RunConfig` a run is made of.
"""

from __future__ import annotations

import logging
import tomllib
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from harness.apps.osworld2_options import apply_osworld2, sandbox_image
from harness.apps.sandbox_options import apply_sandbox_options
from harness.apps.seed_options import apply_seed_options
from harness.control import CONTROLLERS
from harness.control.lstc.gui import COORDINATE_SCALES as COORDS
from harness.control.lstc.gui import grounder_options
from harness.control.memory import LessonStore
from harness.kernel.core import StateActError, require_one_of
from harness.models import endpoint_provider, make_model
from harness.models.judge import ModelJudge
from harness.reports.html_report import write_trajectory_html
from harness.run.config import GATE_MODES, MAX_BEST_OF, PRESETS, RunConfig
from sandboxes import BACKENDS
from tasks.webarena.deployment import configure as configure_webarena
from tasks.webarena.deployment import use_judge

log = logging.getLogger(__name__)


class CommonOptions(BaseModel):
    """The options every command that runs tasks shares (`batch` has these and its own)."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    context_window: int | None = None
    gate_model: str | None = None
    sandbox: str = "docker"
    image: str | None = None
    """None: `desktop`, or `osworld2` with --osworld2 (`sandbox_image`)."""
    preset: str = "full"
    max_turns: int | None = None
    """None: 150, or OSWorld 2.0's 500 with --osworld2."""
    max_cost: float | None = None
    max_time: float | None = None
    price_in: float | None = None
    price_out: float | None = None
    cache: str | None = None
    network: bool = False
    network_mode: str = "host"
    control: str = "stateact"
    grounder: str | None = None
    grounder_base_url: str | None = None
    grounder_coordinates: str | None = None
    allow_host_paths: bool = False
    task_state: bool = False
    thinking: str = "off"
    worker_depth: int = 1
    nested_gate: bool = False
    gate_mode: str = "layered"
    keep_screenshots: int = 3
    screenshot_gate: bool = False
    main_display: bool = False
    screen: str | None = None
    agent_sudo: bool = False
    no_stall: bool = False
    andor_grain: str = "subtask"
    andor_repair: str = "on"
    andor_or: str = "on"
    lstc_without: list[str] = []
    structagent_verifier: str = "structured"
    structagent_step_verifier: str = "on"
    structagent_without: list[str] = []
    out: str | None = None
    resume: bool = False


class RunOptions(CommonOptions):
    """`stateact run`: the shared options plus best-of-N rollouts and the lesson memory."""

    best_of: int = 1
    memory: str | None = None
    osworld2: str | None = None
    osworld2_data: str | None = None
    osworld2_python: str | None = None
    osworld2_websites: str | None = None
    osworld2_gitlab: str | None = None
    osworld2_services: str | None = None
    osworld2_host_suffix: str | None = None
    osworld2_build_network: str | None = None
    checkpoint_eval_mode: str = "off"
    checkpoint_steps: str | None = None
    judge_model: str | None = None
    user_model: str | None = None
    sites: str | None = None


class SuiteOptionsModel(RunOptions):
    """`stateact suite`: the run options plus parallelism, OUT handling, selection and Ray."""

    parallel: int | None = None
    retry_errors: bool = False
    force: bool = False
    fail_on_error: float | None = None
    filter: str | None = None
    slice: str | None = None
    shuffle: int | None = None
    trials: int = 1
    ray: str | None = None
    ray_retries: int = 3
    ray_image_archive: str | None = None
    requests_per_minute: float | None = None
    warm: int = 0
    dry_run: bool = False
    by_blocker: bool = False
    build_fixtures: bool = False
    summary: bool = False
    demo: bool = False


class BatchOptionsModel(CommonOptions):
    """`stateact batch`: the run options plus the batch's own."""

    instruction: str | None = None
    parallel: int = 1
    check: str | None = None
    force: bool = False
    fail_on_error: float | None = None
    ray: str | None = None
    ray_retries: int = 3
    ray_image_archive: str | None = None
    requests_per_minute: float | None = None
    warm: int = 0


MODELS: dict[str, type[CommonOptions]] = {
    "run": RunOptions,
    "suite": SuiteOptionsModel,
    "batch": BatchOptionsModel,
}
"""The options model of each command that takes `--config`."""


def load_config_file(path: str | Path) -> dict:
    """The mapping a YAML (.yaml/.yml) or TOML (.toml) run config holds, keys with `_`."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise StateActError(f"cannot read the run config {path}: {exc.strerror or exc}.") from None
    try:
        if path.suffix.lower() == ".toml":
            data = tomllib.loads(text)
        elif path.suffix.lower() in (".yaml", ".yml"):
            data = yaml.safe_load(text)
        else:
            raise StateActError(f"the run config {path} must be .yaml, .yml or .toml.")
    except (yaml.YAMLError, tomllib.TOMLDecodeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise StateActError(f"the run config {path} does not parse: {first}.") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise StateActError(f"the run config {path} must be a mapping of option names to values.")
    return {_key(k): v for k, v in data.items()}


def parse_overrides(pairs: list[str] | None) -> dict:
    """`-c key=value` pairs as a mapping (values read as YAML scalars)."""
    values = {}
    for pair in pairs or []:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise StateActError(f"-c takes key=value (for example -c max_turns=60), not {pair!r}.")
        try:
            value = yaml.safe_load(raw) if raw.strip() else None
        except yaml.YAMLError:
            value = raw
        values[_key(key)] = value
    return values


def _key(key) -> str:
    return str(key).strip().lstrip("-").replace("-", "_")


def validate_options(command: str, values: dict, source: str = "the run config") -> CommonOptions:
    """`values` checked by `command`'s model; StateActError names unknown keys or bad values."""
    model = MODELS[command]
    unknown = sorted(set(values) - set(model.model_fields))
    if unknown:
        names = ", ".join(repr(k) for k in unknown)
        raise StateActError(
            f"{source} has unknown key(s) {names} for `stateact {command}`; the keys are its "
            "long options (for example max_turns)."
        )
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"]) or "?"
        raise StateActError(f"{source}: {where}: {error['msg']}.") from None


def read_run_config(
    command: str, path: str | Path | None, overrides: list[str] | dict | None = None
) -> dict:
    """The validated keys of a run config file plus overrides (only the keys they set)."""
    values = load_config_file(path) if path is not None else {}
    if isinstance(overrides, dict):
        values.update({_key(k): v for k, v in overrides.items()})
    else:
        values.update(parse_overrides(overrides))
    source = f"the run config {path}" if path is not None else "the -c overrides"
    validate_options(command, values, source)
    return values


def options_from_args(args, model: type[CommonOptions] = RunOptions) -> CommonOptions:
    """The parsed command line as `model` (the attributes the command has; others default)."""
    values = {name: getattr(args, name) for name in model.model_fields if hasattr(args, name)}
    return validate_options_quiet(model, values)


def validate_options_quiet(model: type[CommonOptions], values: dict) -> CommonOptions:
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = "--" + "-".join(str(p) for p in error["loc"]).replace("_", "-")
        raise StateActError(f"{where}: {error['msg']}.") from None


def config_from_options(options: CommonOptions) -> RunConfig:
    """The RunConfig the options describe, with bad values named in one sentence."""
    require_one_of("sandbox backend", options.sandbox, BACKENDS)
    require_one_of("preset", options.preset, PRESETS)
    require_one_of("control mode", options.control, tuple(CONTROLLERS))
    if options.worker_depth not in (1, 2):
        raise StateActError("--worker-depth must be 1 or 2.")
    best_of = getattr(options, "best_of", 1)
    if not 1 <= best_of <= MAX_BEST_OF:
        raise StateActError(f"--best-of must be between 1 and {MAX_BEST_OF}.")
    if options.model is None:
        raise StateActError("--model is required (PROVIDER/NAME, for example openai/gpt-4o).")
    config = RunConfig(
        model=options.model,
        preset=options.preset,
        cache_dir=options.cache,
        control=options.control,
        allow_host_paths=options.allow_host_paths,
    )
    config.task_state.enabled = options.task_state
    config.best_of = best_of
    config.memory_dir = _memory_dir(getattr(options, "memory", None))
    config.sites = getattr(options, "sites", None)
    # --judge-model judges WebArena's fuzzy_match answers when there are WebArena sites
    config.judge_model = getattr(options, "judge_model", None) if config.sites else None
    configure_webarena(config.sites, getattr(options, "parallel", None), options.cache)
    if config.judge_model:  # a bad spec or key fails now, in one sentence
        use_judge(ModelJudge(make_model(config.judge_model, config.model_options)))
    config.subagents.worker_depth = options.worker_depth
    config.subagents.nested_gate = options.nested_gate
    model_options = config.model_options
    model_options.base_url = options.base_url
    model_options.api_key = options.api_key
    model_options.provider = endpoint_provider(options.model)
    model_options.context_window = options.context_window
    model_options.prices = price_override(options.price_in, options.price_out)
    config.model_options = model_options.with_thinking(options.thinking)
    config.gate.model = options.gate_model
    config.sandbox.backend = options.sandbox
    config.sandbox.image = sandbox_image(options)
    config.sandbox.network = options.network
    config.sandbox.network_mode = options.network_mode
    apply_sandbox_options(options.screen, options.agent_sudo, config)
    apply_osworld2(config, options)
    config.loop.max_cost_usd = options.max_cost
    config.loop.max_wall_s = options.max_time
    _set_grounder(config, options)
    _set_experiment_options(config, options)
    apply_seed_options(options, config)
    return config


def _set_experiment_options(config: RunConfig, options: CommonOptions) -> None:
    """The options of the paper's comparison: the baseline's screenshots and gate, the paper's
    gate, the main agent's display."""
    require_one_of("gate mode", options.gate_mode, GATE_MODES)
    if options.keep_screenshots < 0:
        raise StateActError("--keep-screenshots must be 0 (keep all) or more.")
    screenshot_only = options.keep_screenshots != 3 or options.screenshot_gate
    if screenshot_only and config.control != "screenshot":
        raise StateActError(
            "--keep-screenshots and --screenshot-gate set the baseline; add --control screenshot."
        )
    config.screenshot.keep_images = options.keep_screenshots
    config.screenshot.gate = options.screenshot_gate
    config.gate.mode = options.gate_mode
    config.main_display = options.main_display


def price_override(price_in: float | None, price_out: float | None) -> dict[str, float]:
    """`--price-in/--price-out` (USD per million tokens) as `ModelConfig.prices`."""
    prices = {}
    for key, value in (("input", price_in), ("output", price_out)):
        if value is not None:
            if value < 0:
                raise StateActError(f"--price-{key[:-3] or key} must not be negative.")
            prices[key] = float(value)
    return prices


def _set_grounder(config: RunConfig, options: CommonOptions) -> None:
    grounder = options.grounder
    if grounder:
        if config.control != "lstc":
            raise StateActError(
                "--grounder gives the lstc mode its GUI channel; add --control lstc."
            )
        require_one_of("grounder coordinates", options.grounder_coordinates or "pixels", COORDS)
        # fails fast on a bad spec or a missing key, as the main model does
        make_model(
            grounder, grounder_options(grounder, config.model_options, options.grounder_base_url)
        )
        config.lstc.grounder = grounder
        config.lstc.grounder_base_url = options.grounder_base_url
        config.lstc.grounder_coordinates = options.grounder_coordinates or "pixels"
    elif options.grounder_base_url or options.grounder_coordinates:
        raise StateActError("--grounder-base-url and --grounder-coordinates need --grounder.")


def _memory_dir(value: str | None) -> str | None:
    if value is None:
        return None
    path = Path(value).expanduser()
    if path.exists() and not path.is_dir():
        raise StateActError(f"--memory {value} is not a folder.")
    LessonStore(path).close()  # a store that cannot be opened fails now, not after the run
    return str(path.resolve())


def render_trajectory(run_dir: Path) -> None:
    """Write a single run's trajectory.html (a suite renders its runs itself); a rendering problem
    is logged, never fatal: the run's records are already written."""
    try:
        for folder in [run_dir, *sorted(run_dir.glob("rollout-*"))]:
            if (folder / "trajectory.jsonl").exists():
                write_trajectory_html(folder)
    except Exception as exc:  # noqa: BLE001
        log.warning("could not render %s/trajectory.html: %s", run_dir, exc)

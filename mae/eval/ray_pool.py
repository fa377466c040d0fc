"""Evaluations spread over a Ray cluster: one actor per phone, the eval folder and its resume here.

The driver (this process) plans the task runs exactly as a serial eval does and hands them, one at a
time, to ``PhoneActor``s. An actor owns one phone on its node (its own virtual phone, or an attached ADB
phone it claims with a lock file so two actors never share one), a model client and a Perceptor; it runs
the task into a folder of its own node and sends back the record with its run folder packed, and, in the
evolution setting, the scenario's long-term memory. Only the driver writes the eval folder, so reports,
the Judge view and ``--resume`` are those of a serial eval.

API keys are never sent to the cluster: every node reads them from its own environment. Ray is an
optional extra (``pip install "ray[default]"``); nothing here imports it before ``connect_ray``.
"""

from __future__ import annotations

import fcntl
import io
import os
import shutil
import tarfile
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from mae.config import Settings
from mae.device import VIRTUAL
from mae.device.base import Device
from mae.errors import ConfigError, DeviceError, ExitReason
from mae.eval.records import TaskRecord, append_result
from mae.eval.runner import (
    Episode,
    EvalOptions,
    EvalRunner,
    Progress,
    duration_text,
    memory_folder_name,
    outcome_text,
    pending_episodes,
    results_so_far,
)
from mae.eval.tasks import EvalTask
from mae.eval.workers import RequestGate, gate_runtime
from mae.run.evolution import BetweenTasks
from mae.run.loop import PerceptorLike

PHONE_RESOURCE = "phone"
"""Custom Ray resource a node started with ``--resources '{"phone": N}'`` offers for its N ADB phones."""
PerceptorFactory = Callable[[Device], PerceptorLike]


class RayConnection:
    """A connection to Ray made by ``connect_ray``; ``close`` shuts down only what it started."""

    def __init__(self, owned: bool) -> None:
        self.owned = owned

    def close(self) -> None:
        import ray

        if self.owned and ray.is_initialized():
            ray.shutdown()


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError(
            "--ray needs Ray, an optional extra: pip install 'ray[default]' (on the driver and every node)"
        ) from None
    return ray


def connect_ray(address: str | None = None, *, num_cpus: int | None = None) -> RayConnection:
    """Join the cluster at ``address`` (``auto``, ``ray://head:10001``...) or start a local Ray instance
    (no dashboard, quiet workers, this checkout importable by them); reuses a connection already made."""
    ray = _ray()
    if ray.is_initialized():
        return RayConnection(owned=False)
    package_root = str(Path(__file__).resolve().parents[2])
    quiet = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
    try:
        if address:
            ray.init(address=address, log_to_driver=False, configure_logging=False)
        else:
            ray.init(
                num_cpus=num_cpus or max(2, os.cpu_count() or 2),
                runtime_env={"env_vars": {"PYTHONPATH": package_root}},
                _node_ip_address="127.0.0.1",
                **quiet,
            )
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = f"the Ray cluster at {address}" if address else "a local Ray instance"
        raise ConfigError(
            f"could not connect to {where} ({exc}): check that it runs, or drop the address"
        ) from None
    return RayConnection(owned=True)


def pack_folder(folder: Path | None) -> bytes:
    """``folder``'s files as a gzipped tar (empty bytes when there is no folder)."""
    if folder is None or not folder.is_dir():
        return b""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        archive.add(folder, arcname=".")
    return buffer.getvalue()


def unpack_folder(data: bytes, folder: Path) -> None:
    """Replace ``folder`` with the files of ``pack_folder``'s archive (nothing outside it is written)."""
    if not data:
        return
    staging = folder.with_name(folder.name + ".incoming")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        archive.extractall(staging, filter="data")
    shutil.rmtree(folder, ignore_errors=True)
    staging.rename(folder)


class EpisodeOutcome(BaseModel):
    """What an actor sends back for one task run."""

    record: TaskRecord | None = None
    run_archive: bytes = b""
    memory_archive: bytes = b""
    halted: str | None = None
    phone_failed: str | None = None
    stopped: bool = False


def _claim_phone(locks: Path) -> tuple[str, Any]:
    """An attached ADB phone of this node that no other actor holds (the lock lasts as long as the actor)."""
    from mae.device.adb_devices import attached_serials

    locks.mkdir(parents=True, exist_ok=True)
    for serial in attached_serials():
        handle = (locks / f"{''.join(c if c.isalnum() else '_' for c in serial)}.lock").open("w")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            continue
        return serial, handle
    raise DeviceError("no free phone is attached to this node: attach one per actor, or run fewer actors")


class PhoneActor:
    """One phone on one node, running task runs for the driver (used as a Ray actor)."""

    def __init__(
        self,
        settings_json: str,
        options_json: str,
        device: str | None,
        perceptor_factory: PerceptorFactory | None = None,
        assume_yes: bool = False,
        max_in_flight: int = 1,
    ) -> None:
        from mae.run.runtime import build_runtime

        settings = Settings.model_validate_json(settings_json)
        self._lock_handle = None
        if device is None:
            device, self._lock_handle = _claim_phone(Path(tempfile.gettempdir()) / "mae-phone-locks")
        self.scratch = Path(tempfile.mkdtemp(prefix="mae-ray-eval-"))
        settings = settings.model_copy(update={"device": device, "log_dir": self.scratch / "runs"})
        if perceptor_factory is not None:
            from mae.device import open_device

            phone = open_device(device)
            runtime = build_runtime(settings, device=phone, perceptor=perceptor_factory(phone))
        else:
            runtime = build_runtime(settings)
        self.gate = RequestGate(max_in_flight)
        gate_runtime(runtime, self.gate)
        self.runtime = runtime
        options = EvalOptions.model_validate_json(options_json)
        self.runner = EvalRunner(
            self.scratch, options, [], runtime, approver=lambda _call, _why, _step: assume_yes
        )

    def describe(self) -> str:
        """``<phone> on <node>``."""
        return f"{self.runtime.device.name} on {os.uname().nodename}"

    def max_in_flight(self) -> int:
        """The most model requests this actor had in flight at once."""
        return self.gate.max_in_flight

    def calls(self) -> int:
        """Model calls this actor made."""
        return len(self.runtime.client.records)

    def run(self, episode: Episode, memory_archive: bytes = b"") -> EpisodeOutcome:
        """Run one task run here and pack what the driver keeps."""
        memory_root = self.scratch / "memory"
        name = memory_folder_name(episode.task.scenario, episode.repeat)
        shutil.rmtree(memory_root / name, ignore_errors=True)
        unpack_folder(memory_archive, memory_root / name)
        device = self.runtime.device
        try:
            session = self.runner.session(self.runtime, episode.repeat, episode.task.scenario, memory_root)
            between = BetweenTasks(BetweenTasks.default_mode(device), device)
            record = self.runner.run_episode(self.runtime, episode, session, between)
        except (DeviceError, OSError) as exc:
            return EpisodeOutcome(phone_failed=str(exc) or type(exc).__name__)
        if record is None:
            halted, self.runner.halted = self.runner.halted, None
            self.runner.stop_event.clear()
            return EpisodeOutcome(halted=halted, stopped=halted is None)
        run_dir = Path(record.run_dir) if record.run_dir else None
        outcome = EpisodeOutcome(
            record=record,
            run_archive=pack_folder(run_dir),
            memory_archive=pack_folder(memory_root / name)
            if self.runner.options.setting == "evolution"
            else b"",
        )
        if run_dir is not None:
            shutil.rmtree(run_dir, ignore_errors=True)
        return outcome


class RayEvalRunner:
    """Runs an eval into ``folder`` on Ray actors; same records, reports and resume as a serial eval."""

    def __init__(
        self,
        folder: Path,
        options: EvalOptions,
        tasks: list[EvalTask],
        settings: Settings,
        *,
        actors: int | None = None,
        max_in_flight: int | None = None,
        assume_yes: bool = False,
        progress: Progress | None = None,
        stop_event: threading.Event | None = None,
        perceptor_factory: PerceptorFactory | None = None,
    ) -> None:
        self.folder = folder
        self.options = options
        self.tasks = tasks
        self.settings = settings
        self.progress = progress or (lambda _message: None)
        self.stop_event = stop_event or threading.Event()
        self.halted: str | None = None
        self.left_over = 0
        self.failed_workers: list[str] = []
        self.actor_count = actors
        self.max_in_flight = max_in_flight
        self.assume_yes = assume_yes
        self.perceptor_factory = perceptor_factory
        self.virtual = any(t.source == "virtual" for t in tasks)
        self.max_in_flight_seen = 0
        """The most model requests one actor had in flight at once."""
        self.calls_per_actor: list[int] = []
        self._lock = threading.Lock()
        self._queue: deque[list[Episode]] = deque()
        self._finished = 0
        self._todo = 0
        self._started = time.monotonic()

    def _actors(self) -> list[Any]:
        ray = _ray()
        if self.virtual:
            count = self.actor_count or max(1, len([n for n in ray.nodes() if n.get("Alive")]))
            device: str | None = VIRTUAL
            resources: dict[str, float] = {}
        else:
            phones = int(ray.cluster_resources().get(PHONE_RESOURCE, 0))
            count = self.actor_count or phones or 1
            named = self.settings.device
            # one named phone serves one actor; otherwise every actor claims an attached phone of its node
            device = named if named == VIRTUAL or (count == 1 and named and "," not in named) else None
            resources = {PHONE_RESOURCE: 1} if phones and device != VIRTUAL else {}
        per_actor = max(1, (self.max_in_flight or count) // count)
        remote = ray.remote(PhoneActor).options(
            num_cpus=0, resources=resources, scheduling_strategy="SPREAD", max_concurrency=1
        )
        settings_json = self.settings.model_dump_json()
        options_json = self.options.model_dump_json()
        return [
            remote.remote(
                settings_json, options_json, device, self.perceptor_factory, self.assume_yes, per_actor
            )
            for _ in range(count)
        ]

    def run(self) -> list[TaskRecord]:
        """Run every task run not done yet on the actors; returns every record of the folder."""
        ray = _ray()
        chains = pending_episodes(self.folder, self.options, self.tasks)
        self._queue = deque(chains)
        self._todo = sum(len(chain) for chain in chains)
        total_all = self.options.repeat * len(self.tasks)
        if self._todo < total_all:
            self.progress(f"resuming: {total_all - self._todo} of {total_all} task runs already done")
        if not self._todo:
            return results_so_far(self.folder)
        actors = self._actors()
        try:
            try:
                names = ray.get([actor.describe.remote() for actor in actors])
            except Exception as exc:  # an actor that cannot open its phone or its model client
                lines = [line.strip() for line in str(getattr(exc, "cause", None) or exc).splitlines()]
                why = next((line for line in reversed(lines) if line), type(exc).__name__)
                raise ConfigError(
                    f"the Ray actors could not start ({why}): check each node's phones, keys and mae install"
                ) from None
            self.progress(
                f"{len(actors)} Ray actor(s): " + ", ".join(f"a{i + 1} {n}" for i, n in enumerate(names))
            )
            self._started = time.monotonic()
            threads = [
                threading.Thread(target=self._drive, args=(f"a{i + 1}", actor), daemon=True)
                for i, actor in enumerate(actors)
            ]
            for thread in threads:
                thread.start()
            try:
                for thread in threads:
                    while thread.is_alive():
                        thread.join(0.5)
            except KeyboardInterrupt:
                self.stop_event.set()
                for actor in actors:  # the task runs under way are dropped: they rerun on resume
                    ray.kill(actor)
                for thread in threads:
                    thread.join()
            if not self.stop_event.is_set():
                self.max_in_flight_seen = max(ray.get([a.max_in_flight.remote() for a in actors]))
                self.calls_per_actor = ray.get([a.calls.remote() for a in actors])
        finally:
            for actor in actors:
                ray.kill(actor)
        self.left_over = sum(len(chain) for chain in self._queue)
        if self.left_over and len(self.failed_workers) == len(actors):
            self.progress(
                f"every phone failed, so {self.left_over} task run(s) did not run; fix them and resume"
            )
        return results_so_far(self.folder)

    def _take(self) -> list[Episode] | None:
        with self._lock:
            if self.stop_event.is_set() or self.halted or not self._queue:
                return None
            return self._queue.popleft()

    def _drive(self, name: str, actor: Any) -> None:
        ray = _ray()
        while (chain := self._take()) is not None:
            for position, episode in enumerate(chain):
                self.progress(f"[{name}] {episode.key}: {episode.task.instruction[:70]}")
                memory = self.folder / "memory" / memory_folder_name(episode.task.scenario, episode.repeat)
                sent = pack_folder(memory) if self.options.setting == "evolution" else b""
                try:
                    outcome: EpisodeOutcome = ray.get(actor.run.remote(episode, sent))
                except Exception as exc:  # the actor died (its node went away) or broke
                    if self.stop_event.is_set():
                        return
                    outcome = EpisodeOutcome(phone_failed=f"its actor failed ({type(exc).__name__})")
                if outcome.phone_failed or outcome.record is None:
                    with self._lock:
                        self._queue.appendleft(chain[position:])
                        if outcome.halted:
                            self.halted = outcome.halted
                        if outcome.stopped:
                            self.stop_event.set()
                        if outcome.phone_failed:
                            self.failed_workers.append(f"{name}: {outcome.phone_failed}")
                    if outcome.phone_failed:
                        self.progress(f"[{name}] stops: {outcome.phone_failed}; the other actors go on")
                    return
                self._keep(name, episode, outcome)
                if outcome.record.exit_reason is ExitReason.DEVICE_ERROR:
                    with self._lock:
                        if position + 1 < len(chain):
                            self._queue.appendleft(chain[position + 1 :])
                        self.failed_workers.append(f"{name}: {outcome.record.message}")
                    self.progress(f"[{name}] stops: its phone failed; the other actors go on")
                    return

    def _keep(self, name: str, episode: Episode, outcome: EpisodeOutcome) -> None:
        """Store the run folder, the memory and the record in the eval folder (driver side)."""
        record = outcome.record
        assert record is not None
        if record.run_dir:
            local = self.folder / "runs" / Path(record.run_dir).name
            unpack_folder(outcome.run_archive, local)
            record = record.model_copy(update={"run_dir": str(local)})
        if outcome.memory_archive:
            name_ = memory_folder_name(episode.task.scenario, episode.repeat)
            unpack_folder(outcome.memory_archive, self.folder / "memory" / name_)
        with self._lock:
            append_result(self.folder, record)
            self._finished += 1
            finished = self._finished
        left = (time.monotonic() - self._started) / finished * (self._todo - finished)
        eta = f", about {duration_text(left)} left" if finished < self._todo else ""
        self.progress(f"[{name}] [{finished}/{self._todo}{eta}] {episode.key}: {outcome_text(record)}")

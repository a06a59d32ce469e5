"""`stateact memory list|show ID|forget ID|--all --memory DIR`: the lessons `--memory` keeps."""

from __future__ import annotations

import time
from pathlib import Path

from harness.control.memory import STORE_FILE, LessonStore
from harness.kernel.core import StateActError
from harness.kernel.display import visible


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "memory",
        help="list, show or forget the lessons a --memory folder keeps",
        description="The lessons `run`/`suite --memory DIR` distilled from earlier runs' gate "
        "rounds. Exit 0 on success, 2 on bad input (a missing store or lesson).",
    )
    parser.add_argument("action", choices=("list", "show", "forget"))
    parser.add_argument("lesson", nargs="?", type=int, help="lesson id (show, forget)")
    parser.add_argument("--memory", required=True, metavar="DIR", help="the lesson store folder")
    parser.add_argument("--all", action="store_true", help="with forget: every lesson")
    parser.set_defaults(handler=run)


def run(args) -> int:
    directory = Path(args.memory)
    if not (directory / STORE_FILE).is_file():
        raise StateActError(f"{directory} holds no lesson store ({STORE_FILE}).")
    with LessonStore(directory) as store:
        if args.action == "list":
            lessons = store.all()
            for lesson in lessons:
                task, text = visible(lesson.task_id), visible(lesson.text)[:100]
                print(f"{lesson.id}\t{lesson.kind}\t{task}\t{text}")
            if not lessons:
                print("no lessons")
            return 0
        if args.action == "forget" and args.all:
            print(f"forgot {store.forget()} lesson(s)")
            return 0
        if args.lesson is None:
            raise StateActError(f"memory {args.action} needs a lesson id (see `memory list`).")
        lesson = store.get(args.lesson)
        if lesson is None:
            raise StateActError(f"there is no lesson {args.lesson} in {directory}.")
        if args.action == "forget":
            store.forget(args.lesson)
            print(f"forgot lesson {args.lesson}")
            return 0
        created = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(lesson.created))
        print(
            f"lesson {lesson.id} ({lesson.kind}), from task {visible(lesson.task_id)} at {created}"
        )
        print(f"instruction: {visible(lesson.instruction)}")
        print(visible(lesson.text))
        return 0

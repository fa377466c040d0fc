"""Fake phones for ``mae device doctor``: the fake adb server (``fake_adb_server``) answering as one real
device, from that device's transcripts in the shared real-device corpus (``../shared/data/real_devices/adb``:
``getprop``, ``dumpsys``), plus a small Settings app written here (its home screen with a search bar, and
the search screen whose text field shows what was typed).

The phone side of typing is simulated as the phone does it: ``sh`` parses the command line (``shlex``),
``input text`` turns ``%s`` into spaces, ADB Keyboard decodes its base64 broadcasts, ``input keyevent``
67 deletes a character. A ``| grep -E PATTERN`` after a ``dumpsys`` is applied to the transcript.
"""

from __future__ import annotations

import base64
import io
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from fake_adb_server import FakeAdb
from PIL import Image

FIXTURES = Path(__file__).parent / "fixtures"
CORPUS_ADB = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "real_devices" / "adb"
ADB_IME = "com.android.adbkeyboard/.AdbIME"
LATIN_IME = "com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME"

SETTINGS_HOME = """<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0">
<node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.android.settings"
 content-desc="" clickable="false" bounds="[0,0][{w},{h}]">
<node index="0" text="Settings" resource-id="com.android.settings:id/homepage_title"
 class="android.widget.TextView" package="com.android.settings" content-desc="" clickable="false"
 bounds="[63,300][600,420]" />
<node index="1" text="" resource-id="com.android.settings:id/search_action_bar"
 class="android.widget.Toolbar" package="com.android.settings" content-desc="" clickable="true"
 bounds="[42,480][{r},620]"><node index="0" text="Search Settings"
 resource-id="com.android.settings:id/search_action_bar_title" class="android.widget.TextView"
 package="com.android.settings" content-desc="" clickable="false" bounds="[170,520][700,580]" /></node>
<node index="2" text="Network &amp; internet" resource-id="android:id/title" class="android.widget.TextView"
 package="com.android.settings" content-desc="" clickable="false" bounds="[200,700][800,760]" />
</node></hierarchy>"""

SETTINGS_SEARCH = """<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0">
<node index="0" text="" resource-id="" class="android.widget.FrameLayout"
 package="com.google.android.settings.intelligence" content-desc="" clickable="false" bounds="[0,0][{w},{h}]">
<node index="0" text="" resource-id="" class="android.widget.ImageButton"
 package="com.google.android.settings.intelligence" content-desc="Navigate up" clickable="true"
 bounds="[0,80][140,220]" />
<node index="1" text="{text}"
 resource-id="com.google.android.settings.intelligence:id/open_search_view_edit_text"
 class="android.widget.EditText" package="com.google.android.settings.intelligence" content-desc=""
 clickable="true" focused="true" bounds="[160,90][{r},210]" />
</node></hierarchy>"""


def corpus_text(name: str) -> str:
    """A transcript of the corpus as the phone printed it (some were saved as UTF-16 by PowerShell)."""
    raw = (CORPUS_ADB / name).read_bytes()
    return raw.decode("utf-16") if raw[:2] == b"\xff\xfe" else raw.decode("utf-8", errors="replace")


def _png(size: tuple[int, int], shade: int) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, (shade, shade, shade)).save(buffer, format="PNG")
    return buffer.getvalue()


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")


@dataclass
class PhoneScript:
    """How one real device answers; what its transcripts do not hold is named here."""

    getprop: str
    size: tuple[int, int]
    dumpsys_window: str = (
        "  mCurrentFocus=Window{5d1c8e u0 com.android.launcher3/com.android.launcher3.Launcher}\n"
    )
    dumpsys_input: str = ""
    activity_top: str = ""
    adb_keyboard: bool = True
    dump_error: str = ""
    """What ``uiautomator dump`` prints instead of the tree (``""``: it works)."""
    taps_land: bool = True
    field_text: str = ""
    screen: str = "home"
    ime: str = LATIN_IME
    log: list[str] = field(default_factory=list)

    # -- answers --------------------------------------------------------------------------------------

    def dump(self) -> str:
        width, height = self.size
        if self.screen == "search":
            text = _escape(self.field_text)
            return SETTINGS_SEARCH.format(w=width, h=height, r=width - 40, text=text)
        if self.screen == "settings":
            return SETTINGS_HOME.format(w=width, h=height, r=width - 42)
        return (
            '<?xml version="1.0"?><hierarchy rotation="0"><node text="" class="android.widget.FrameLayout" '
            f'package="com.android.launcher3" clickable="false" bounds="[0,0][{width},{height}]">'
            '<node text="Phone" class="android.widget.TextView" package="com.android.launcher3" '
            f'clickable="true" bounds="[40,{height - 300}][240,{height - 100}]" /></node></hierarchy>'
        )

    def ime_state(self) -> str:
        installed = [LATIN_IME] + ([ADB_IME] if self.adb_keyboard else [])
        enabled = [LATIN_IME] + ([ADB_IME] if self.ime == ADB_IME else [])
        return "\n".join([*installed, "---", *enabled, "---", LATIN_IME]) + "\n"

    def input_method(self) -> str:
        shown = "true" if self.screen == "search" else "false"
        return f"  mCurMethodId={self.ime}\n  mInputShown={shown}\n"

    def run(self, command: str) -> str:
        """What the phone's ``sh`` prints for ``command`` (a chain of ``&&``/``;`` commands)."""
        self.log.append(command)
        outputs = []
        for part in re.split(r" && |; ", command):
            outputs.append(self._one(part.strip()))
        return "".join(outputs)

    def _one(self, command: str) -> str:
        base, _, grep = command.partition(" | grep -E ")
        text = self._answer(base)
        if grep:
            pattern = re.compile(shlex.split(grep)[0])
            text = "".join(line + "\n" for line in text.splitlines() if pattern.search(line))
        return text

    def _answer(self, command: str) -> str:
        words = shlex.split(command)
        if command == "getprop":
            return self.getprop
        if command == "wm size":
            return f"Physical size: {self.size[0]}x{self.size[1]}\n"
        if command == "wm density":
            return ""  # not in the corpus; the doctor reads ro.sf.lcd_density from getprop
        if command == "dumpsys window":
            return self.dumpsys_window
        if command == "dumpsys input":
            return self.dumpsys_input
        if command == "dumpsys activity top":
            return self.activity_top
        if command == "dumpsys input_method":
            return self.input_method()
        if words[:2] == ["ime", "list"]:
            return self.ime_state() if words[2:] == ["-a", "-s"] else ""
        if words[:3] == ["settings", "get", "secure"] or command == "echo ---":
            return ""
        if words[:2] == ["ime", "enable"]:
            return f"Input method {words[2]}: now enabled\n"
        if words[:2] == ["ime", "set"]:
            self.ime = words[2]
            return f"Input method {words[2]} selected for user #0\n"
        if words[:2] == ["ime", "disable"]:
            return ""
        if words[:3] == ["am", "start", "-W"]:
            self.screen = "settings"
            return "Starting: Intent { act=android.settings.SETTINGS }\nStatus: ok\n"
        if words[:2] == ["am", "broadcast"] and self.ime == ADB_IME and self.screen == "search":
            self.field_text += base64.b64decode(words[-1]).decode("utf-8")
            return (
                "Broadcasting: Intent { act=ADB_INPUT_B64 flg=0x400000 (has extras) }\nBroadcast completed\n"
            )
        if words[:2] == ["input", "tap"]:
            if not self.taps_land:
                return (
                    "java.lang.SecurityException: Injecting to another application requires INJECT_EVENTS "
                    "permission\n"
                )
            x, y = int(words[2]), int(words[3])
            if self.screen == "settings" and 42 <= x < self.size[0] - 42 and 480 <= y < 620:
                self.screen = "search"
            return ""
        if words[:2] == ["input", "text"]:
            if self.screen == "search":
                self.field_text += words[2].replace("%s", " ")
            return ""
        if words[:2] == ["input", "keyevent"]:
            for key in words[2:]:
                if key == "67":
                    self.field_text = self.field_text[:-1]
                elif key in ("3", "4"):
                    self.screen = "home"
            return ""
        if words[:2] == ["uiautomator", "dump"]:
            return self.dump_error or f"UI hierchary dumped to: {words[-1]}\n"
        if words[:1] == ["cat"]:
            return self.dump()
        if words[:2] == ["rm", "-f"]:
            return ""
        raise AssertionError(f"the fake phone does not know `{command}`")

    def exec_out(self, command: str) -> bytes:
        self.log.append(command)
        if command == "screencap -p":
            return _png(self.size, 200 if self.screen == "search" else 100)
        if command == "screencap":
            return b""  # this phone's raw screencap is not simulated: the doctor keeps PNG
        if command == "uiautomator dump /dev/tty":
            if self.dump_error:
                return self.dump_error.encode()
            return (self.dump() + "UI hierchary dumped to: /dev/tty").encode()
        if command.startswith("cat "):
            return (self.dump_error or self.dump()).encode()
        return self.run(command).encode()


class _Answers(dict[str, bytes]):
    """The fake server's command table, answering every command from a ``PhoneScript``."""

    def __init__(self, answer: object) -> None:
        super().__init__()
        self._answer = answer

    def get(self, key: str, default: bytes | None = None) -> bytes:  # type: ignore[override]
        return self._answer(key)  # type: ignore[operator, no-any-return]


def fake_adb_for(script: PhoneScript) -> FakeAdb:
    """A fake adb server's state answering as ``script``'s phone."""
    fake = FakeAdb()
    fake.shell = _Answers(lambda cmd: script.run(cmd).encode())
    fake.exec = _Answers(script.exec_out)
    return fake


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")

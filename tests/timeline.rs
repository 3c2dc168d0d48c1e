//! `wt status <runId> --timeline`: a real run drawn as SVG and as HTML, and what headless
//! Chromium makes of the files (`WT_TEST_CHROMIUM`, installed by scripts/test): every task's
//! label in the rendered page, the failed task's bar in the failure colour, the sums shown, and
//! a screenshot with the picture's ink and red in it.

mod common;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{TestRepo, chromium};
use serde_json::Value;

const RUN: &str = "7e1a2b";
const FAILURE_COLOUR: &str = "#d62728";
const PARTS: [&str; 5] = ["preparing", "agent", "committing", "verifying", "stacking"];
/// Each task's label as Chromium serializes the text of the page (`&`, `<`, `>` escaped).
const LABELS: [&str; 4] =
    ["1.1 Schema &amp; &lt;model&gt;", "2.1 French", "2.2 German \"strict\"", "2.3 Spanish"];

/// Two phases: a sequential one, then a parallel one whose German task fails until `gate` exists.
fn plan(repo: &TestRepo, gate: &Path) -> PathBuf {
    repo.plan(
        "plan.toml",
        &format!(
            r#"
[run]
id = "{RUN}"
[agent]
max_parallel = 3
[[phase]]
name = "Core <&> \"base\""
strategy = "sequential"
[[phase.task]]
name = "Schema & <model>"
run = "sleep 0.2 && echo schema > schema.sql"
verify = "test -f schema.sql"
[[phase]]
name = "Languages"
strategy = "parallel"
[[phase.task]]
name = "French"
run = "sleep 0.3 && echo bonjour > fr.txt"
[[phase.task]]
name = 'German "strict"'
run = "test -f {gate} && echo hallo > de.txt || {{ echo 'no <gate> & no \"pass\"' >&2; exit 3; }}"
[[phase.task]]
name = "Spanish"
run = "echo hola > es.txt"
verify = "test -f es.txt"
"#,
            gate = gate.display()
        ),
    )
}

/// `wt status <RUN> --timeline <file> --json`.
fn draw(repo: &TestRepo, file: &Path) -> Value {
    let out = repo.wt(&["status", RUN, "--timeline", file.to_str().unwrap(), "--json"]);
    serde_json::from_str(&out.ok()).unwrap()
}

struct Browser<'r> {
    repo: &'r TestRepo,
    program: PathBuf,
}

impl Browser<'_> {
    fn run(&self, args: &[&str]) -> String {
        let profile = self.repo.scratch.join("chromium-profile");
        let out = self
            .repo
            .command(self.program.to_str().unwrap(), &self.repo.scratch)
            .args(["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"])
            .arg(format!("--user-data-dir={}", profile.display()))
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "chromium {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    }

    /// The page's DOM after Chromium loaded it.
    fn dom(&self, file: &Path) -> String {
        self.run(&["--virtual-time-budget=5000", "--dump-dom", &format!("file://{}", file.display())])
    }

    /// A screenshot of `file` at the size of its drawing.
    fn screenshot(&self, file: &Path, png: &Path) {
        let svg = std::fs::read_to_string(file).unwrap();
        let height = attribute(&svg, "height").parse::<f64>().unwrap() as u32;
        let width = attribute(&svg, "width").parse::<f64>().unwrap() as u32;
        self.run(&[
            &format!("--window-size={width},{height}"),
            &format!("--screenshot={}", png.display()),
            &format!("file://{}", file.display()),
        ]);
    }

    /// How many pixels of `png` are not white, and how many are the failure colour, counted by
    /// Chromium itself in a canvas (the image is inlined: a file image would taint the canvas).
    fn ink_and_red(&self, png: &Path) -> (u64, u64) {
        let probe = self.repo.scratch.join("probe.html");
        std::fs::write(&probe, PROBE.replace("{png}", &base64(&std::fs::read(png).unwrap()))).unwrap();
        let dom = self.dom(&probe);
        let result = dom.split("<pre id=\"result\">").nth(1).unwrap().split('<').next().unwrap();
        let count = |key: &str| -> u64 {
            let value = result.split(' ').find_map(|field| field.strip_prefix(key)).unwrap();
            value.parse().unwrap_or_else(|_| panic!("probe said {result}"))
        };
        (count("ink="), count("red="))
    }
}

const PROBE: &str = r#"<!DOCTYPE html><html><body><img id="shot" src="data:image/png;base64,{png}">
<pre id="result">not loaded</pre><script>
window.addEventListener('load', () => {
  const img = document.getElementById('shot');
  const canvas = document.createElement('canvas');
  canvas.width = img.naturalWidth;
  canvas.height = img.naturalHeight;
  const context = canvas.getContext('2d');
  context.drawImage(img, 0, 0);
  const d = context.getImageData(0, 0, canvas.width, canvas.height).data;
  let ink = 0, red = 0;
  for (let i = 0; i < d.length; i += 4) {
    if (d[i] < 245 || d[i + 1] < 245 || d[i + 2] < 245) ink++;
    if (Math.abs(d[i] - 0xd6) < 16 && Math.abs(d[i + 1] - 0x27) < 16 && Math.abs(d[i + 2] - 0x28) < 16) red++;
  }
  document.getElementById('result').textContent = 'ink=' + ink + ' red=' + red;
});
</script></body></html>"#;

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (k, b)| n | u32::from(*b) << (16 - 8 * k));
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The value of the first `name="…"` in `text`.
fn attribute<'t>(text: &'t str, name: &str) -> &'t str {
    let mark = format!(" {name}=\"");
    let start = text.find(&mark).unwrap_or_else(|| panic!("no {name} in {text:.200}")) + mark.len();
    text[start..].split('"').next().unwrap()
}

/// The opening tags of `<rect` elements that carry every one of `marks`.
fn rects<'d>(dom: &'d str, marks: &[&str]) -> Vec<&'d str> {
    dom.split("<rect")
        .skip(1)
        .map(|rest| rest.split('>').next().unwrap())
        .filter(|tag| marks.iter().all(|mark| tag.contains(mark)))
        .collect()
}

fn assert_sums_shown(dom: &str, json: &Value) {
    for part in PARTS {
        let ms = &json["parts_ms"][part];
        assert!(ms.is_u64(), "parts_ms.{part} in {json}");
        let shown = format!("data-part=\"{part}\" data-ms=\"{ms}\"");
        assert!(dom.contains(&shown), "the page shows the {part} sum ({shown})");
    }
    assert!(dom.contains(&format!("data-part=\"wall\" data-ms=\"{}\"", json["wall_ms"])));
    assert!(dom.contains("wall time"));
}

#[test]
fn the_timeline_shows_every_task_the_failure_in_red_and_the_sums() {
    let program = chromium();
    let repo = TestRepo::new();
    let browser = Browser { repo: &repo, program };
    let gate = repo.scratch.join("gate");
    let plan = plan(&repo, &gate);
    assert_eq!(repo.wt(&["run", plan.to_str().unwrap()]).code(), 1, "German fails");

    let svg = repo.scratch.join("run.svg");
    let json = draw(&repo, &svg);
    assert_eq!(json["timeline"], svg.to_str().unwrap());
    assert_eq!((json["status"].as_str(), json["format"].as_str()), (Some("failed"), Some("svg")));
    assert!(json["parts_ms"]["agent"].as_u64().unwrap() >= 500, "the agents slept 0.5 s: {json}");
    let states: Vec<&str> =
        json["tasks"].as_array().unwrap().iter().map(|t| t["state"].as_str().unwrap()).collect();
    assert_eq!(states, ["verified", "verified", "failed", "verified"]);
    assert!(json["tasks"][2]["error"].as_str().unwrap().contains("exited with status 3"));

    let svg_dom = browser.dom(&svg);
    for label in LABELS {
        assert!(svg_dom.contains(label), "the SVG shows {label}");
    }
    let png = repo.scratch.join("run.png");
    browser.screenshot(&svg, &png);
    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG\r\n\x1a\n"));
    let (ink, red) = browser.ink_and_red(&png);
    assert!(ink > 5_000, "the screenshot is drawn on ({ink} pixels not white)");
    assert!(red > 20, "the failed bar is red in the screenshot ({red} red pixels)");

    let html = repo.scratch.join("run.html");
    let json = draw(&repo, &html);
    assert_eq!(json["format"], "html");
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(text.starts_with("<!DOCTYPE html>") && !text.contains("<script") && !text.contains("href="));
    assert!(!text.contains("src="), "nothing is loaded from elsewhere");
    let dom = browser.dom(&html);
    for label in LABELS {
        assert!(dom.contains(label), "the page shows {label}");
    }
    let failed = rects(&dom, &["data-task=\"2.2\"", "class=\"bar"]);
    assert!(
        !failed.is_empty() && failed.iter().any(|bar| bar.contains(&format!("fill=\"{FAILURE_COLOUR}\"")))
    );
    for task in ["1.1", "2.1", "2.3"] {
        let bars = rects(&dom, &[&format!("data-task=\"{task}\""), "class=\"bar"]);
        assert!(!bars.is_empty(), "task {task} has bars");
        assert!(bars.iter().all(|bar| !bar.contains(FAILURE_COLOUR)), "task {task} did not fail");
    }
    assert!(dom.contains("exited with status 3"), "the failure's error is in the page");
    assert_sums_shown(&dom, &json);
    assert!(dom.contains("<table id=\"sums\">") && dom.contains("<table id=\"tasks\">"));

    // Resumed once the gate is open: the pause between the attempts is marked, the parallel
    // phase is stacked, and the first attempt's failure stays in the picture.
    std::fs::write(&gate, "open").unwrap();
    repo.wt(&["resume", RUN]).ok();
    let json = draw(&repo, &html);
    assert_eq!((json["status"].as_str(), json["attempts"].as_u64()), (Some("done"), Some(2)));
    assert!(json["parts_ms"]["stacking"].as_u64().unwrap() > 0);
    assert!(json["paused_ms"].as_u64().unwrap() > 0);
    let dom = browser.dom(&html);
    for label in LABELS {
        assert!(dom.contains(label), "the resumed run's page shows {label}");
    }
    assert!(dom.contains("<g class=\"pause\">"), "the pause between attempts is marked");
    assert_eq!(rects(&dom, &["data-phase=\"2\"", "class=\"bar stacking"]).len(), 1);
    assert!(
        rects(&dom, &["data-task=\"2.2\"", FAILURE_COLOUR]).len() == 1,
        "the first attempt's failure stays"
    );
    assert_sums_shown(&dom, &json);
}

#[test]
fn only_svg_and_html_files_are_written() {
    let repo = TestRepo::new();
    let target = repo.scratch.join("run.png");
    let out = repo.wt(&["status", RUN, "--timeline", target.to_str().unwrap()]);
    assert_eq!(out.code(), 2, "{}", out.stderr());
    assert!(out.stderr().contains("--timeline writes a .svg or a .html file, not"), "{}", out.stderr());
    assert!(!target.exists());
    let out = repo.wt(&["status", "--timeline", "run.svg"]);
    assert_eq!(out.code(), 2, "a timeline needs a run id: {}", out.stderr());
    assert!(std::fs::read_dir(&repo.scratch).unwrap().next().is_none(), "nothing was written");
    assert!(!repo.root.join("run.svg").exists());
}

#[test]
fn a_running_run_is_drawn_up_to_now() {
    let repo = TestRepo::new();
    let gate = repo.scratch.join("gate");
    let plan = repo.plan(
        "plan.toml",
        &format!(
            "[run]\nid = \"{RUN}\"\n[[phase]]\nstrategy = \"sequential\"\n[[phase.task]]\nname = \"Wait\"\n\
             run = \"while ! test -f {gate}; do sleep 0.1; done; echo done > done.txt\"\n",
            gate = gate.display()
        ),
    );
    let mut run = repo
        .command(env!("CARGO_BIN_EXE_wt"), &repo.root)
        .args(["run", plan.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let events = repo.root.join(format!(".git/spectacular/runs/{RUN}/events.jsonl"));
    let deadline = Instant::now() + Duration::from_secs(60);
    while !std::fs::read_to_string(&events).unwrap_or_default().contains("\"activity\":\"agent\"") {
        assert!(Instant::now() < deadline, "the task never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    let svg = repo.scratch.join("live.svg");
    let json = draw(&repo, &svg);
    std::fs::write(&gate, "open").unwrap();
    assert!(run.wait().unwrap().success());

    assert_eq!(json["status"], "running");
    assert_eq!(json["tasks"][0]["state"], "running");
    assert!(
        json["parts_ms"]["agent"].as_u64().unwrap() >= 300,
        "the open agent part lasts until now: {json}"
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("running (drawn up to now)") && text.contains("class=\"now\""));
    assert!(text.contains("still under way"));
}

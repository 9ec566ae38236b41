//! `gpufec run --dashboard`: the JSON values move while the run goes and are
//! sane, the page shows the same values in headless Chromium, FutureSDR's
//! control port answers beside it, Ctrl-C still ends the run with its
//! summary, and bad addresses are refused before the run.

mod common;

use common::{fresh_dir, gpufec, refused, say};
use serde_json::Value;
use std::io::{BufRead, Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const SHIPPED: &str = "flowgraphs/viterbi_awgn.toml";

/// The browser the test opens the page in (Debian's `chromium`;
/// `scripts/setup.sh` installs it).
const CHROMIUM: &str = "chromium";

/// A run of `gpufec`, killed if the test ends before it does.
struct Running {
    child: Child,
    stdout: std::io::BufReader<std::process::ChildStdout>,
    stderr: std::thread::JoinHandle<String>,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Start `gpufec run` with `args` and read its stdout up to the dashboard's
/// URL.
fn start(args: &[&str]) -> (Running, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpufec"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("gpufec starts");
    let mut err = child.stderr.take().expect("stderr piped");
    let stderr = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = err.read_to_string(&mut text);
        text
    });
    let stdout = std::io::BufReader::new(child.stdout.take().expect("stdout piped"));
    let mut run = Running { child, stdout, stderr };
    let mut line = String::new();
    loop {
        line.clear();
        assert!(run.stdout.read_line(&mut line).expect("stdout reads") > 0, "the run ended before it named its dashboard");
        if let Some(rest) = line.strip_prefix("dashboard: ") {
            let url = rest.split_whitespace().next().expect("a URL").to_string();
            return (run, url);
        }
    }
}

/// The body of a GET of `path` at `url` (`http://HOST:PORT/`).
fn get(url: &str, path: &str) -> String {
    let host = url.trim_start_matches("http://").trim_end_matches('/');
    // The URL is printed as the run starts, the server a moment after.
    let until = Instant::now() + Duration::from_secs(10);
    let mut s = loop {
        match std::net::TcpStream::connect(host) {
            Ok(s) => break s,
            Err(e) => assert!(Instant::now() < until, "the dashboard at {url} does not answer: {e}"),
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(s, "GET {path} HTTP/1.0\r\nHost: {host}\r\n\r\n").unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).expect("an answer");
    let (head, body) = answer.split_once("\r\n\r\n").expect("headers and a body");
    assert!(head.starts_with("HTTP/1.0 200") || head.starts_with("HTTP/1.1 200"), "GET {path}: {head}");
    body.to_string()
}

fn values(url: &str) -> Value {
    serde_json::from_str(&get(url, "/api/dashboard")).expect("the values are JSON")
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// The values of one moment are sane for the shipped chain at 4 dB on the CPU.
fn sane(v: &Value) {
    assert_eq!(v["format"], "gpufec-dashboard/1");
    let b = &v["ber"][0];
    let (bits, errors) = (num(&b["bits"]), num(&b["bit_errors"]));
    let r: Vec<f64> = b["rates"].as_array().unwrap().iter().map(num).collect();
    assert!(bits > 0.0 && (r[0] - errors / bits).abs() <= 1e-12 * r[0].max(1e-300), "{b}");
    assert!((1e-6..1e-3).contains(&r[0]), "BER at 4 dB is near 2e-5: {b}");
    assert!(r[1] <= r[0] && r[0] <= r[2] && r[4] <= r[3] && r[3] <= r[5], "the intervals hold their rates: {b}");
    let p = &v["probes"][0];
    assert!(num(&p["mbps"]) > 0.0 && num(&p["bits"]) > 0.0, "{p}");
    assert!(p["series"].as_array().unwrap().iter().all(|s| num(&s[1]) >= 0.0), "{p}");
    let shares: f64 = v["blocks"].as_array().unwrap().iter().filter_map(|b| b["share_pct"].as_f64()).sum();
    assert!((shares - 100.0).abs() < 1e-6, "the blocks' shares add up to 100 %: {}", v["blocks"]);
    let d = &v["decoders"][0];
    assert_eq!(d["backend"], "cpu");
    assert!(d["gpu_share_pct"].is_null() && d["mean_iterations"].is_null(), "a CPU Viterbi decoder has neither: {d}");
}

/// The raw number the page holds in `data-value` of the element `id`.
fn shown(dom: &str, id: &str) -> f64 {
    let at = dom.find(&format!("id=\"{id}\"")).unwrap_or_else(|| panic!("the page has no #{id}"));
    let tag = &dom[at..at + dom[at..].find('>').unwrap()];
    let value = tag.split("data-value=\"").nth(1).unwrap_or_else(|| panic!("#{id} has no value: {tag}"));
    value.split('"').next().unwrap().parse().unwrap_or_else(|_| panic!("#{id}: {tag}"))
}

/// Whether a browser can run here; fails loudly when it is missing, unless
/// `GPUFEC_SKIP_BROWSER=1` says to check the JSON only.
fn have_browser() -> bool {
    if Command::new(CHROMIUM).arg("--version").output().is_ok_and(|o| o.status.success()) {
        return true;
    }
    if std::env::var("GPUFEC_SKIP_BROWSER").as_deref() == Ok("1") {
        say("SKIPPED the dashboard's page in a browser: GPUFEC_SKIP_BROWSER=1 and no chromium");
        return false;
    }
    panic!("the dashboard test opens the page in headless Chromium, which is not installed: run scripts/setup.sh (apt-get install -y chromium), or set GPUFEC_SKIP_BROWSER=1 to check the JSON only");
}

/// Chromium, headless, with a fresh profile, on `url`, doing `what`
/// (`--dump-dom`, `--screenshot=PATH`); its stdout.
fn chromium(url: &str, what: &str, profile: &std::path::Path) -> String {
    let _ = std::fs::remove_dir_all(profile);
    let o = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--window-size=1400,1100",
            "--virtual-time-budget=3000",
            &format!("--user-data-dir={}", profile.display()),
            what,
            url,
        ])
        .output()
        .expect("chromium runs");
    assert!(o.status.success(), "chromium {what}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn the_dashboard_shows_the_running_flowgraph() {
    // No cap on the bits: the run goes until the test's Ctrl-C, however fast the machine.
    let (mut run, url) = start(&["run", SHIPPED, "--backend", "cpu", "--set", "source.total=1e12", "--dashboard", "127.0.0.1:0"]);
    assert!(url.starts_with("http://127.0.0.1:") && !url.ends_with(":0/"), "{url}");
    let page = get(&url, "/");
    assert!(page.contains("<canvas") && page.contains("/dashboard.js"), "{page}");
    assert!(get(&url, "/dashboard.js").contains("/api/dashboard"));

    let wait_for = |enough: &dyn Fn(&Value) -> bool| {
        let until = Instant::now() + Duration::from_secs(120);
        loop {
            let v = values(&url);
            if enough(&v) {
                return v;
            }
            assert!(Instant::now() < until, "the values did not move: {v}");
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    let first = wait_for(&|v| v["ber"][0]["bit_errors"].as_u64().is_some_and(|e| e > 0) && v["probes"][0]["series"].as_array().is_some_and(|s| !s.is_empty()));
    sane(&first);
    let later = wait_for(&|v| num(&v["elapsed_s"]) > num(&first["elapsed_s"]) + 1.0);
    sane(&later);
    assert!(num(&later["ber"][0]["bits"]) > num(&first["ber"][0]["bits"]), "the counts grow");
    // FutureSDR's own REST interface answers at the same address: the running flowgraph is 0.
    assert_eq!(serde_json::from_str::<Value>(&get(&url, "/api/fg/")).unwrap(), serde_json::json!([0]));
    assert!(later["probes"][0]["series"].as_array().unwrap().len() > first["probes"][0]["series"].as_array().unwrap().len());

    if have_browser() {
        let dir = fresh_dir("dashboard", "browser");
        let mut loads = Vec::new();
        for i in 0..2 {
            // The page's values are those of the JSON between the two readings around it.
            let before = values(&url);
            let dom = chromium(&url, "--dump-dom", &dir.join(format!("profile{i}")));
            let after = values(&url);
            assert!(dom.contains("data-state=\"running\""), "the page reached the run: {dom}");
            let pairs = [("bits", &["ber", "0", "bits"][..]), ("errors", &["ber", "0", "bit_errors"]), ("frames", &["ber", "0", "frames"]), ("elapsed", &["elapsed_s"])];
            for (id, path) in pairs {
                let at = |v: &Value| num(path.iter().fold(v, |v, k| k.parse::<usize>().map_or(&v[*k], |i| &v[i])));
                let (low, page, high) = (at(&before), shown(&dom, id), at(&after));
                assert!(low <= page && page <= high, "#{id}: the page shows {page}, the JSON {low} before and {high} after");
            }
            let (bits, errors) = (shown(&dom, "bits"), shown(&dom, "errors"));
            assert!((shown(&dom, "ber") - errors / bits).abs() <= 1e-9 * errors / bits, "the page's BER is its errors over its bits");
            assert!(shown(&dom, "ber-low") < shown(&dom, "ber") && shown(&dom, "ber") < shown(&dom, "ber-high"));
            assert!(shown(&dom, "mbps") > 0.0 && dom.contains("id=\"block-decoder\"") && dom.contains("id=\"decoder-decoder\""));
            assert!(dom.contains("id=\"gpu-share\" class=\"value\" data-value=\"\">n/a<"), "a CPU decoder has no GPU share");
            loads.push((bits, shown(&dom, "elapsed")));
        }
        assert!(loads[1].0 > loads[0].0 && loads[1].1 > loads[0].1, "the page's values move between loads: {loads:?}");
        let png = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("dashboard.png");
        let _ = std::fs::remove_file(&png);
        chromium(&url, &format!("--screenshot={}", png.display()), &dir.join("profile-shot"));
        let bytes = std::fs::read(&png).expect("the screenshot was written");
        assert!(bytes.starts_with(b"\x89PNG") && bytes.len() > 20_000, "{} bytes", bytes.len());
        say(&format!("the dashboard's screenshot: {}", png.display()));
    }

    // Ctrl-C with the dashboard on: the summary of what was counted, exit 130.
    let killed = Command::new("kill").args(["-INT", &run.child.id().to_string()]).status().expect("kill runs");
    assert!(killed.success());
    let mut out = String::new();
    run.stdout.read_to_string(&mut out).unwrap();
    let status = run.child.wait().unwrap();
    let err = std::mem::replace(&mut run.stderr, std::thread::spawn(String::new)).join().unwrap();
    assert_eq!(status.code(), Some(130), "{out}\n{err}");
    let summary = out.lines().find(|l| l.starts_with("summary:")).unwrap_or_default();
    assert!(summary.contains("(interrupted)") && !summary.contains("bits 0,"), "{out}");
    // The status line keeps its pace of one line a second without a
    // terminal, though the dashboard reads the figures four times as often.
    let lines: Vec<f64> = err.lines().filter(|l| l.contains(" s  bits ")).map(|l| l.split_whitespace().next().unwrap().parse().unwrap()).collect();
    assert!(lines.len() >= 3 && lines.windows(2).all(|w| w[1] - w[0] > 0.9), "{err}");
}

#[test]
fn bad_dashboard_addresses_are_refused_before_the_run() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let taken = taken.local_addr().unwrap().to_string();
    for (addr, want) in [
        (taken.as_str(), &["--dashboard", taken.as_str(), "cannot listen there", "in use"][..]),
        ("127.0.0.1:99999", &["--dashboard '127.0.0.1:99999': not an address"]),
        ("nowhere", &["--dashboard 'nowhere': not an address"]),
        ("0.0.0.0:0", &["--dashboard 0.0.0.0:0: not a loopback address", "--dashboard-public"]),
        ("192.0.2.1:8080", &["not a loopback address", "--dashboard-public"]),
    ] {
        let o = gpufec(&["run", SHIPPED, "--backend", "cpu", "--dashboard", addr]);
        refused(&o, want);
        assert!(o.stdout.is_empty(), "{addr}: refused before the run: {}", String::from_utf8_lossy(&o.stdout));
    }
    // The opt-in needs the dashboard, and lets it listen on every address.
    assert_eq!(gpufec(&["run", SHIPPED, "--dashboard-public"]).status.code(), Some(2));
    let o = gpufec(&["run", SHIPPED, "--backend", "cpu", "--set", "source.total=1e5", "--dashboard", "0.0.0.0:0", "--dashboard-public"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("dashboard: http://127.0.0.1:") && out.contains("summary: bits 100000,"), "{out}");
}

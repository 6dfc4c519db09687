//! Experiment scripts: one step per line.
//!
//! ```text
//! # a comment
//! timeout 20                  # seconds each later command may take (default 30)
//! pingall                     # every host pings every other; passes on 0% loss
//! h1: ping -c 3 10.0.0.2      # a shell command on h1; passes on exit status 0
//! h2 &: memcached -u nobody   # started in the background, stopped at the end
//! h1 !: ping -c 1 10.0.0.9    # passes when the command fails
//! sleep 0.5                   # wait
//! ```
//!
//! `$WORK` in a command is the experiment's working directory (shared by all hosts), `$EMU` the
//! `emu` binary (with `emu mininet --debug`: `h1: $EMU dbg $WORK/s1.dbg --exec 'read floods'`).

use serde::Serialize;

/// One step of an experiment.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Step {
    /// Every host pings every other host.
    Pingall,
    /// Wait.
    Sleep {
        /// Seconds.
        secs: f64,
    },
    /// A shell command on a host.
    Cmd {
        /// The host's name.
        host: String,
        /// The command, run by bash in the host's namespace.
        cmd: String,
        /// Start it and go on; it is stopped when the experiment ends.
        background: bool,
        /// It passes when it fails.
        expect_fail: bool,
        /// Seconds it may take.
        timeout_s: f64,
    },
}

/// Default time a command may take, in seconds.
pub const DEFAULT_TIMEOUT_S: f64 = 30.0;

/// Parses a script; `hosts` are the names commands may run on. Errors name the line.
pub fn parse<'a>(text: &str, hosts: impl Iterator<Item = &'a str> + Clone) -> Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    let mut timeout_s = DEFAULT_TIMEOUT_S;
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim();
        let at = |msg: String| format!("line {}: {msg}", n + 1);
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let word = line.split_whitespace().next().unwrap_or("");
        match word {
            "pingall" if line == "pingall" => steps.push(Step::Pingall),
            "timeout" | "sleep" if !line.contains(':') => {
                let arg = line[word.len()..].trim();
                let secs: f64 = arg
                    .parse()
                    .ok()
                    .filter(|s: &f64| *s > 0.0 && s.is_finite())
                    .ok_or_else(|| at(format!("`{word} {arg}`: give a number of seconds, like `{word} 2.5`")))?;
                if word == "timeout" {
                    timeout_s = secs;
                } else {
                    steps.push(Step::Sleep { secs });
                }
            }
            _ => {
                let (head, cmd) = line.split_once(':').ok_or_else(|| {
                    at(format!("`{line}` is not a step; write `HOST: COMMAND`, `pingall`, `sleep S` or `timeout S`"))
                })?;
                let head = head.trim();
                let (host, background, expect_fail) = match head.strip_suffix('&').or_else(|| head.strip_suffix('!')) {
                    Some(h) => (h.trim(), head.ends_with('&'), head.ends_with('!')),
                    None => (head, false, false),
                };
                if !hosts.clone().any(|h| h == host) {
                    let known: Vec<&str> = hosts.clone().collect();
                    return Err(at(format!("no host `{host}` in the topology (hosts: {})", known.join(", "))));
                }
                let cmd = cmd.trim();
                if cmd.is_empty() {
                    return Err(at(format!("`{host}:` has no command after it")));
                }
                steps.push(Step::Cmd { host: host.into(), cmd: cmd.into(), background, expect_fail, timeout_s });
            }
        }
    }
    if steps.is_empty() {
        return Err("the script has no steps".into());
    }
    Ok(steps)
}

#[cfg(test)]
mod test {
    use super::*;

    const HOSTS: [&str; 2] = ["h1", "h2"];

    #[test]
    fn every_kind_of_step() {
        let s = parse(
            "# c\npingall\ntimeout 5\nh1: ping -c 1 10.0.0.2\nh2 &: sleep 100\nh1!: false\nsleep 0.5\n",
            HOSTS.iter().copied(),
        )
        .unwrap();
        assert_eq!(s.len(), 5);
        assert_eq!(s[0], Step::Pingall);
        assert_eq!(
            s[1],
            Step::Cmd { host: "h1".into(), cmd: "ping -c 1 10.0.0.2".into(), background: false, expect_fail: false, timeout_s: 5.0 }
        );
        assert!(matches!(&s[2], Step::Cmd { background: true, .. }));
        assert!(matches!(&s[3], Step::Cmd { expect_fail: true, .. }));
        assert_eq!(s[4], Step::Sleep { secs: 0.5 });
        let json = serde_json::to_string(&s[4]).unwrap();
        assert_eq!(json, r#"{"kind":"sleep","secs":0.5}"#);
    }

    #[test]
    fn errors_name_the_line() {
        let e = |t: &str| parse(t, HOSTS.iter().copied()).unwrap_err();
        assert_eq!(e("pingall\nh9: true"), "line 2: no host `h9` in the topology (hosts: h1, h2)");
        assert!(e("ping everything").starts_with("line 1: `ping everything` is not a step"));
        assert!(e("timeout soon").contains("give a number of seconds"));
        assert!(e("h1:   ").contains("has no command"));
        assert_eq!(e("# nothing\n"), "the script has no steps");
    }
}

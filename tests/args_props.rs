//! Property tests of the argument grammar: no input panics, every error is
//! an `invalid_argument`, and requests rendered to argv parse back to the
//! same request.

mod common;

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use as_edit::dispatch::argv::{read, Argv};
use as_edit::protocol::ErrorKind;
use base64::Engine as _;
use proptest::prelude::*;

fn token() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::sample::select(vec![
            "--",
            "-",
            "--replace-all",
            "--dry-run",
            "--report",
            "--diff",
            "--fsync",
            "--stdin",
            "--lock-timeout",
            "--lock-timeout=1.5",
            "--root",
            "--root=/tmp",
            "--expect-sha256",
            "--eol",
            "--eol=preserve",
            "--max-request-bytes",
            "--max-request-bytes=18446744073709551616",
            "--replace-all=false",
            "--fsync=",
            "-hV",
            "true",
            "false",
            "YQ==",
            "",
            "f",
            "-x",
            "--bogus",
            "=",
            "YQ",
            "/w==",
            "4pyT",
        ])
        .prop_map(|s| s.as_bytes().to_vec()),
        prop::collection::vec(any::<u8>(), 0..12),
    ]
}

fn b64(s: &str) -> OsString {
    OsString::from(base64::engine::general_purpose::STANDARD.encode(s))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

    #[test]
    fn never_panics_and_errors_are_invalid_argument(args in prop::collection::vec(token(), 0..10)) {
        let args: Vec<OsString> = args.into_iter().map(OsString::from_vec).collect();
        if let Err(f) = read(&args, None) {
            prop_assert_eq!(f.kind, ErrorKind::InvalidArgument);
            prop_assert!(f.detail.is_some_and(|d| !d.is_empty()));
        }
    }

    #[test]
    fn rendered_requests_parse_back(
        path in prop::collection::vec(any::<u8>(), 1..20).prop_filter("not an option", |p| p[0] != b'-'),
        edits in prop::collection::vec(("[a-z\r\n é]{1,6}", "[a-z\r\n é]{0,6}", any::<bool>()), 1..4),
        dashdash in any::<bool>(),
    ) {
        let mut args = Vec::new();
        if dashdash || edits.len() > 1 {
            args.push(OsString::from("--"));
        }
        args.push(OsString::from_vec(path.clone()));
        for (old, new, all) in &edits {
            args.push(b64(old));
            args.push(b64(new));
            args.push(OsString::from(if *all { "true" } else { "false" }));
        }
        match read(&args, None) {
            Ok(Argv::Edit(r)) => {
                prop_assert_eq!(r.path.into_os_string().into_vec(), path);
                prop_assert_eq!(r.edits.len(), edits.len());
                for (e, (old, new, all)) in r.edits.iter().zip(&edits) {
                    let norm = |s: &str| s.replace("\r\n", "\n").replace('\r', "\n").into_bytes();
                    prop_assert_eq!(e.old_text(), &norm(old)[..]);
                    prop_assert_eq!(e.new_text(), &norm(new)[..]);
                    prop_assert_eq!(e.replace_all(), *all);
                }
            }
            other => prop_assert!(false, "{:?}", other),
        }
    }
}

/// Options that take no value, and options that take one (argv spelling).
const NO_VALUE: &[&str] = &[
    "--replace-all",
    "--dry-run",
    "--report",
    "--diff",
    "--fsync",
    "--stdin",
    "--help",
    "--version",
];
const WITH_VALUE: &[&str] = &[
    "--lock-timeout",
    "--root",
    "--expect-sha256",
    "--eol",
    "--max-request-bytes",
];

fn os(v: &[&str]) -> Vec<OsString> {
    v.iter().map(OsString::from).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    // `--flag=anything` was once accepted and the value ignored.
    #[test]
    fn flags_without_a_value_refuse_an_inline_one(
        flag in prop::sample::select(NO_VALUE),
        value in "[a-z0-9=\\- ]{0,8}",
        before in prop::sample::subsequence(vec!["--report", "--dry-run"], 0..=2),
    ) {
        let mut args = os(&before);
        args.push(OsString::from(format!("{flag}={value}")));
        args.extend(os(&["--", "f", "YQ==", "Yg=="]));
        let f = read(&args, None).expect_err("an inline value on a flag is refused");
        prop_assert_eq!(f.kind, ErrorKind::InvalidArgument);
        prop_assert_eq!(f.detail, Some(format!("{flag} takes no value, got {value:?}")));
    }

    // `--opt=V` and `--opt V` are the same thing, for every option and value.
    #[test]
    fn inline_and_separate_values_agree(
        opt in prop::sample::select(WITH_VALUE),
        value in prop_oneof![
            "[a-z0-9.=\\-/ ]{0,8}",
            Just("preserve".to_owned()),
            Just("1.5".to_owned()),
            Just("a".repeat(64)),
        ],
        stdin in any::<bool>(),
    ) {
        let tail: &[&str] = if stdin { &["--stdin"] } else { &["--", "f", "YQ==", "Yg=="] };
        let mut inline = vec![OsString::from(format!("{opt}={value}"))];
        inline.extend(os(tail));
        let mut separate = os(&[opt, &value]);
        separate.extend(os(tail));
        prop_assert_eq!(read(&inline, None), read(&separate, None));
    }
}

// `--flag=anything` through the binary: the exact line, and the file untouched.
#[test]
fn inline_value_on_a_flag_is_invalid_argument() {
    let d = common::scratch();
    let f = common::write_file(d.path(), "f", b"a a\n", 0o644);
    for (flag, line) in [
        (
            "--replace-all=false",
            r#"{"error":"invalid_argument","detail":"--replace-all takes no value, got \"false\""}"#,
        ),
        (
            "--dry-run=no",
            r#"{"error":"invalid_argument","detail":"--dry-run takes no value, got \"no\""}"#,
        ),
        (
            "--report=false",
            r#"{"error":"invalid_argument","detail":"--report takes no value, got \"false\""}"#,
        ),
        (
            "--fsync=",
            r#"{"error":"invalid_argument","detail":"--fsync takes no value, got \"\""}"#,
        ),
        (
            "--stdin=",
            r#"{"error":"invalid_argument","detail":"--stdin takes no value, got \"\""}"#,
        ),
        (
            "--help=x",
            r#"{"error":"invalid_argument","detail":"--help takes no value, got \"x\""}"#,
        ),
    ] {
        let r = common::run_argv(d.path(), &[flag.as_bytes(), b"--", b"f", b"YQ==", b"Yg=="]);
        common::assert_result(&r, line, 2);
        assert_eq!(std::fs::read(&f).unwrap(), b"a a\n", "{flag}");
    }
    assert_eq!(common::listing(d.path()), ["f"]);
}

// `max + 1` once wrapped to 0 and a valid request read as empty.
#[test]
fn max_request_bytes_at_and_beyond_u64_max_means_no_bound() {
    for n in [
        "18446744073709551614",
        "18446744073709551615",
        "18446744073709551616",
        "99999999999999999999999999",
    ] {
        let d = common::scratch();
        let f = common::write_file(d.path(), "f", b"one two\n", 0o644);
        let r = common::run_stdin(
            d.path(),
            &["--max-request-bytes", n, "--stdin"],
            br#"{"path":"f","edits":[{"old":"two","new":"2"}]}"#,
        );
        common::assert_result(&r, r#"{"count":1}"#, 0);
        assert_eq!(std::fs::read(&f).unwrap(), b"one 2\n", "{n}");
    }
}

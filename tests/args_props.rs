//! Property tests of the argument grammar: no input panics, every error is
//! an `invalid_argument`, and requests rendered to argv parse back to the
//! same request.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use as_edit::args::{parse, Invocation};
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
        if let Err(f) = parse(&args, None) {
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
        match parse(&args, None) {
            Ok(Invocation::Edit(r)) => {
                prop_assert_eq!(r.path.into_os_string().into_vec(), path);
                prop_assert_eq!(r.edits.len(), edits.len());
                for (e, (old, new, all)) in r.edits.iter().zip(&edits) {
                    let norm = |s: &str| s.replace("\r\n", "\n").replace('\r', "\n").into_bytes();
                    prop_assert_eq!(e.old(), &norm(old)[..]);
                    prop_assert_eq!(e.new_text(), &norm(new)[..]);
                    prop_assert_eq!(e.replace_all(), *all);
                }
            }
            other => prop_assert!(false, "{:?}", other),
        }
    }
}

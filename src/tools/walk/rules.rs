//! A walk's ignore files: each directory's read, within the bounds of
//! [`super::super::ignores`] and with a descriptor free for it, and the
//! names a directory holds filtered through every level's rules.

use std::os::fd::{AsFd, OwnedFd};

use super::super::ignores::{self, Ignores, Seen, Skip, MAX_HELD};
use super::walk_fd::{self, Frame};
use super::Walker;

impl Walker {
    /// The rules of the directory `fd` (path `self.path[..prefix]`).
    /// `Err`: the directory is not walked — no descriptor was free to read
    /// them with (counted), or an ignore file left unread stops a
    /// `gitignore` walk (`Outcome::ignore_skip`).
    pub(super) fn rules(
        &mut self,
        fd: &OwnedFd,
        seen: Seen,
        prefix: usize,
        stack: &mut [Frame],
    ) -> Result<Option<Ignores>, ()> {
        let opts = self.opts;
        let at = prefix.saturating_sub(1);
        // A descriptor free for each ignore file (read one at a time),
        // or the directory is not walked without its rules.
        let spare = match walk_fd::retry(stack, || rustix::io::dup(fd)) {
            Ok(spare) => spare,
            Err(e) => {
                self.out.lost::<()>(e, &self.path[..at]);
                return Err(());
            }
        };
        drop(spare);
        let held = self.above.held()
            + (stack.iter())
                .filter_map(|f| Some(f.rules.as_ref()?.held()))
                .sum::<usize>();
        let room = MAX_HELD.saturating_sub(held);
        let mut skipped = Vec::new();
        let rules = Ignores::read(fd.as_fd(), seen, opts.rg, room, &mut skipped);
        for (name, size) in skipped {
            let path = [&self.path[..prefix], name.as_bytes()].concat();
            Skip::note(&mut self.out.ignore_skip, path, size);
        }
        match self.out.ignore_skip.is_some() && !opts.rg {
            true => Err(()),
            false => Ok(rules),
        }
    }

    /// Drops from `found` what the ignore files say to ignore: those above
    /// the start, those of the directories on the way, and `rules` (this
    /// directory's own); with `rg`, also the hidden names no `!` rule shows.
    pub(super) fn ignore(
        &self,
        arena: &[u8],
        found: &mut Vec<(u32, u32, bool)>,
        rules: Option<&Ignores>,
        prefix: usize,
        stack: &[Frame],
    ) {
        let (rg, hide) = (self.opts.rg, !self.opts.hidden);
        let base = &self.above.base;
        let b = base.len();
        let outer = self.above.rules.iter().map(|(r, o)| (r, *o));
        let mut all: Vec<(&Ignores, usize)> = outer.collect();
        let frames = stack
            .iter()
            .filter_map(|fr| Some((fr.rules.as_ref()?, b + fr.prefix)));
        all.extend(frames);
        all.extend(rules.map(|r| (r, b + prefix)));
        if all.is_empty() && !(rg && hide) {
            return;
        }
        let mut full = [&base[..], &self.path[..prefix]].concat();
        found.retain(|&(x, y, is_dir)| {
            let name = &arena[x as usize..y as usize];
            full.truncate(b + prefix);
            full.extend_from_slice(name);
            let levels: Vec<(&Ignores, &[u8])> =
                all.iter().map(|&(r, s)| (r, &full[s..])).collect();
            match ignores::decide(&levels, is_dir, rg) {
                Some(ignored) => !ignored,
                None => !(rg && hide && name.first() == Some(&b'.')),
            }
        });
    }
}

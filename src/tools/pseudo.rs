//! The file systems a walk never enters: proc, sysfs, devpts, debugfs,
//! tracefs, securityfs, cgroup, cgroup2, bpf, binfmt_misc (known by
//! `fstatfs`'s magic) and devtmpfs. devtmpfs reports tmpfs's magic, so a
//! tmpfs is looked up by its device in `/proc/self/mountinfo`, whose
//! fourth-from-the-separator field names the type (`devtmpfs`); without a
//! readable mountinfo, the mount at `/dev` is taken for it (its device).

use std::os::fd::OwnedFd;

use rustix::fs as rfs;

const PSEUDO: [i64; 10] = [
    0x9fa0,     // proc
    0x62656572, // sysfs
    0x1cd1,     // devpts
    0x64626720, // debugfs
    0x74726163, // tracefs
    0x73636673, // securityfs
    0x27e0eb,   // cgroup
    0x63677270, // cgroup2
    0xcafe4a11, // bpf
    0x42494e4d, // binfmt_misc
];
const TMPFS_MAGIC: i64 = 0x01021994;

/// The devtmpfs devices, read once per walk when a tmpfs is met.
#[derive(Default)]
pub(super) struct Known {
    devtmpfs: Option<Vec<u64>>,
}

impl Known {
    /// Whether the directory `fd` (on device `dev`) is on a file system
    /// never entered.
    pub(super) fn is_pseudo(&mut self, fd: &OwnedFd, dev: u64) -> bool {
        let Ok(fs) = rfs::fstatfs(fd) else {
            return false;
        };
        // The field's type differs between targets.
        #[allow(clippy::unnecessary_cast)]
        let magic = fs.f_type as i64;
        if PSEUDO.contains(&magic) {
            return true;
        }
        if magic != TMPFS_MAGIC {
            return false;
        }
        let devs =
            self.devtmpfs
                .get_or_insert_with(|| match std::fs::read("/proc/self/mountinfo") {
                    Ok(text) => devtmpfs_devices(&text),
                    Err(_) => rfs::stat("/dev")
                        .map(|s| vec![s.st_dev])
                        .unwrap_or_default(),
                });
        devs.contains(&dev)
    }
}

/// The devices (`makedev(major, minor)`) of the devtmpfs mounts listed in
/// a mountinfo text: `ID PARENT MAJOR:MINOR ROOT MOUNT OPTS [TAGS…] - TYPE SOURCE OPTS`.
pub(super) fn devtmpfs_devices(text: &[u8]) -> Vec<u64> {
    let mut out = Vec::new();
    for line in text.split(|&b| b == b'\n') {
        let mut fields = line.split(|&b| b == b' ');
        let Some(dev) = fields.nth(2) else { continue };
        let mut rest = fields.skip_while(|f| *f != b"-");
        if rest.nth(1) != Some(&b"devtmpfs"[..]) {
            continue;
        }
        let dev = std::str::from_utf8(dev).ok().and_then(|d| {
            let (ma, mi) = d.split_once(':')?;
            Some(rfs::makedev(ma.parse().ok()?, mi.parse().ok()?))
        });
        out.extend(dev);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_names_the_devtmpfs_devices() {
        let text = b"22 27 0:21 / /proc rw - proc proc rw\n\
24 27 0:6 / /dev rw,relatime shared:2 - devtmpfs devtmpfs rw,size=1k\n\
25 24 0:23 / /dev/shm rw - tmpfs tmpfs rw\n\
40 27 8:17 / /mnt/x rw - devtmpfs udev rw\n";
        assert_eq!(
            devtmpfs_devices(text),
            [rfs::makedev(0, 6), rfs::makedev(8, 17)]
        );
    }
}

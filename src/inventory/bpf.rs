//! The BPF programs loaded, by type and name, and where each is attached,
//! read through the bpf syscall (BPF_PROG_GET_NEXT_ID and
//! BPF_LINK_GET_NEXT_ID, each object's info by a descriptor closed at
//! once) and, for programs attached to a perf event without a link (as
//! bpftrace's and BCC's tracepoints are), BPF_TASK_FD_QUERY on the perf
//! event descriptors processes hold; read-only. A program on a syscall
//! tracepoint, a kprobe or an LSM hook runs on the paths it hooks, as
//! runtime security agents attach theirs.
//!
//! Five commands and the heads of two kernel structs are read here: aya
//! (whose `loaded_programs` lists programs) would bring a whole BPF loader
//! for a listing, and lists neither links nor perf attachments.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const BPF_PROG_GET_NEXT_ID: libc::c_long = 11;
const BPF_PROG_GET_FD_BY_ID: libc::c_long = 13;
const BPF_OBJ_GET_INFO_BY_FD: libc::c_long = 15;
const BPF_TASK_FD_QUERY: libc::c_long = 20;
const BPF_LINK_GET_FD_BY_ID: libc::c_long = 30;
const BPF_LINK_GET_NEXT_ID: libc::c_long = 31;
/// `struct bpf_prog_info` up to and with its name: type, id, then the
/// name's 16 bytes at 64.
const INFO_HEAD: usize = 80;
const NAME_AT: usize = 64;
/// `struct bpf_link_info` up to the largest part read here: type, id,
/// the program's id at 8, then the link type's union at 16.
pub const LINK_INFO_HEAD: usize = 40;
/// The longest attach-point name kept (a tracepoint's, a probed
/// function's or file's).
const NAME_MAX: usize = 256;

/// One loaded program.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Program {
    /// The program type's name ("kprobe", "tracepoint", "lsm"), or its
    /// number where this build does not know it.
    pub kind: String,
    /// The name it was loaded under (at most 15 bytes), empty where none.
    pub name: String,
    /// Where it is attached ("tracepoint sys_enter", "raw tracepoint
    /// sys_exit", "fentry (BTF type 52331)"), each once; empty where it is
    /// attached nowhere this reader sees (a program held but not attached,
    /// or a run written before attach points were read).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attached: Vec<String>,
}

impl std::fmt::Display for Program {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.name.is_empty() {
            true => write!(f, "{} (unnamed)", self.kind)?,
            false => write!(f, "{} {}", self.kind, self.name)?,
        }
        if !self.attached.is_empty() {
            write!(f, " on {}", self.attached.join(", "))?;
        }
        Ok(())
    }
}

impl Program {
    /// Whether it is attached to a syscall tracepoint: every syscall of
    /// every task then takes the slow path, as a syscall trace event
    /// makes it.
    pub fn on_syscall_path(&self) -> bool {
        self.attached.iter().any(|at| {
            let name = at
                .strip_prefix("tracepoint ")
                .or_else(|| at.strip_prefix("raw tracepoint "));
            name.is_some_and(|n| {
                matches!(n, "sys_enter" | "sys_exit")
                    || n.starts_with("sys_enter_")
                    || n.starts_with("sys_exit_")
            })
        })
    }
}

/// Whether programs of `kind` run on the syscall path or the kernel's
/// functions: tracepoints (syscall ones among them), kprobes, fentry and
/// fexit (`tracing`), LSM hooks, perf events.
pub fn on_kernel_paths(kind: &str) -> bool {
    matches!(
        kind,
        "kprobe"
            | "tracepoint"
            | "raw_tracepoint"
            | "raw_tracepoint_writable"
            | "tracing"
            | "lsm"
            | "perf_event"
    )
}

/// The program type's name, as the kernel's `enum bpf_prog_type` orders
/// them (uapi/linux/bpf.h).
fn kind_name(kind: u32) -> String {
    const KINDS: [&str; 33] = [
        "unspec",
        "socket_filter",
        "kprobe",
        "sched_cls",
        "sched_act",
        "tracepoint",
        "xdp",
        "perf_event",
        "cgroup_skb",
        "cgroup_sock",
        "lwt_in",
        "lwt_out",
        "lwt_xmit",
        "sock_ops",
        "sk_skb",
        "cgroup_device",
        "sk_msg",
        "raw_tracepoint",
        "cgroup_sock_addr",
        "lwt_seg6local",
        "lirc_mode2",
        "sk_reuseport",
        "flow_dissector",
        "cgroup_sysctl",
        "raw_tracepoint_writable",
        "cgroup_sockopt",
        "tracing",
        "struct_ops",
        "ext",
        "lsm",
        "sk_lookup",
        "syscall",
        "netfilter",
    ];
    KINDS
        .get(kind as usize)
        .map_or_else(|| format!("type {kind}"), |k| k.to_string())
}

/// A program from the head of its `struct bpf_prog_info`; Err where the
/// kernel gave less than the head.
pub fn program_from_info(info: &[u8]) -> Result<Program, String> {
    if info.len() < INFO_HEAD {
        return Err(format!(
            "a program's info of {} bytes, too short",
            info.len()
        ));
    }
    Ok(Program {
        kind: kind_name(word(info, 0)),
        name: name_in(&info[NAME_AT..NAME_AT + 16]),
        attached: Vec::new(),
    })
}

/// A word of a kernel struct; 0 past its end.
fn word(bytes: &[u8], at: usize) -> u32 {
    bytes
        .get(at..at + 4)
        .map_or(0, |w| u32::from_ne_bytes(w.try_into().expect("4 bytes")))
}

/// Where a link's name goes for its type: (the pointer's offset in
/// `struct bpf_link_info`, the length's), for the types whose attach
/// point has a name; None for the others. `info` is the head as the
/// kernel filled it without a buffer (the type, and a perf event's kind).
pub fn link_name_at(info: &[u8]) -> Option<(usize, usize)> {
    match (word(info, 0), word(info, 16)) {
        // raw_tracepoint.tp_name, tp_name_len.
        (1, _) => Some((16, 24)),
        // perf_event: a uprobe's file, a kprobe's function, a tracepoint's
        // name, each at 24 with its length at 32.
        (7, 1..=5) => Some((24, 32)),
        _ => None,
    }
}

/// The program a link runs and where it is attached, from the head of its
/// `struct bpf_link_info` and the name the kernel wrote (empty where its
/// type has none); Err where the head is cut short.
pub fn link_from_info(info: &[u8], name: &str) -> Result<(u32, String), String> {
    if info.len() < LINK_INFO_HEAD {
        return Err(format!("a link's info of {} bytes, too short", info.len()));
    }
    let prog_id = word(info, 8);
    let at = match word(info, 0) {
        1 => format!("raw tracepoint {name}"),
        2 => {
            let how = match word(info, 16) {
                23 => "raw tracepoint (BTF)",
                24 => "fentry",
                25 => "fexit",
                26 => "fmod_ret",
                27 => "lsm",
                28 => "iterator",
                43 => "lsm (cgroup)",
                _ => "tracing",
            };
            format!("{how} (BTF type {})", word(info, 24))
        }
        3 => "cgroup".to_string(),
        4 => "iterator".to_string(),
        5 => "network namespace".to_string(),
        6 => "xdp".to_string(),
        7 => match word(info, 16) {
            1 => format!("uprobe {name}"),
            2 => format!("uretprobe {name}"),
            3 => format!("kprobe {name}"),
            4 => format!("kretprobe {name}"),
            5 => format!("tracepoint {name}"),
            _ => "perf event".to_string(),
        },
        8 => "kprobe multi".to_string(),
        9 => "struct_ops".to_string(),
        10 => "netfilter".to_string(),
        11 => "tcx".to_string(),
        12 => "uprobe multi".to_string(),
        13 => "netkit".to_string(),
        14 => "sockmap".to_string(),
        other => format!("link type {other}"),
    };
    Ok((prog_id, at))
}

/// Where a program attached to a perf event without a link is attached,
/// from BPF_TASK_FD_QUERY's `fd_type` and name.
pub fn attach_from_fd_query(fd_type: u32, name: &str) -> String {
    match fd_type {
        0 => format!("raw tracepoint {name}"),
        1 => format!("tracepoint {name}"),
        2 => format!("kprobe {name}"),
        3 => format!("kretprobe {name}"),
        4 => format!("uprobe {name}"),
        5 => format!("uretprobe {name}"),
        other => format!("perf event (fd type {other})"),
    }
}

/// The text of a NUL-terminated name the kernel wrote into `buffer`.
fn name_in(buffer: &[u8]) -> String {
    let end = buffer.iter().position(|&b| b == 0).unwrap_or(buffer.len());
    String::from_utf8_lossy(&buffer[..end]).into_owned()
}

/// The bpf syscall with `attr` of `N` bytes; the raw result.
fn bpf<const N: usize>(cmd: libc::c_long, attr: &mut [u8; N]) -> libc::c_long {
    // SAFETY: attr is valid for N bytes, the size the kernel is told; any
    // pointer in it points to a buffer that outlives the call.
    unsafe { libc::syscall(libc::SYS_bpf, cmd, attr.as_mut_ptr(), N) }
}

/// The ids `next` (BPF_PROG_GET_NEXT_ID or BPF_LINK_GET_NEXT_ID) lists;
/// Err says why none can be listed (a kernel without the bpf syscall, no
/// permission).
fn ids(next: libc::c_long, what: &str) -> Result<Vec<u32>, String> {
    let mut found = Vec::new();
    let mut id = 0u32;
    loop {
        let mut attr = [0u8; 12];
        attr[0..4].copy_from_slice(&id.to_ne_bytes());
        if bpf(next, &mut attr) != 0 {
            let error = std::io::Error::last_os_error();
            if error.raw_os_error() == Some(libc::ENOENT) {
                return Ok(found);
            }
            return Err(format!("the bpf syscall refused to list {what} ({error})"));
        }
        id = word(&attr, 4);
        found.push(id);
    }
}

/// A descriptor for the object `id` (BPF_PROG_GET_FD_BY_ID or
/// BPF_LINK_GET_FD_BY_ID); None where it went away since it was listed.
fn open_by_id(by_id: libc::c_long, id: u32) -> Option<OwnedFd> {
    let mut attr = [0u8; 12];
    attr[0..4].copy_from_slice(&id.to_ne_bytes());
    let fd = bpf(by_id, &mut attr);
    // SAFETY: the kernel returned a new descriptor this owns.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// BPF_OBJ_GET_INFO_BY_FD into `info`; whether the kernel filled it.
fn info_of(fd: &OwnedFd, info: &mut [u8]) -> bool {
    let mut get = [0u8; 16];
    get[0..4].copy_from_slice(&(fd.as_raw_fd() as u32).to_ne_bytes());
    get[4..8].copy_from_slice(&(info.len() as u32).to_ne_bytes());
    get[8..16].copy_from_slice(&(info.as_mut_ptr() as u64).to_ne_bytes());
    bpf(BPF_OBJ_GET_INFO_BY_FD, &mut get) == 0
}

/// Every program loaded on the live system with where it is attached,
/// sorted; Err says why none can be listed.
pub fn read_live() -> Result<Vec<Program>, String> {
    let mut programs = BTreeMap::new();
    for id in ids(BPF_PROG_GET_NEXT_ID, "programs")? {
        let Some(fd) = open_by_id(BPF_PROG_GET_FD_BY_ID, id) else {
            continue;
        };
        let mut info = [0u8; INFO_HEAD];
        if info_of(&fd, &mut info) {
            programs.insert(id, program_from_info(&info)?);
        }
    }
    // Links and perf attachments are read where the kernel lets them be:
    // a program listed without them is still listed.
    let links = ids(BPF_LINK_GET_NEXT_ID, "links").unwrap_or_default();
    let attachments = links
        .into_iter()
        .filter_map(attached_by_link)
        .chain(attached_by_perf_events());
    for (prog_id, at) in attachments {
        if let Some(program) = programs.get_mut(&prog_id)
            && !program.attached.contains(&at)
        {
            program.attached.push(at);
        }
    }
    let mut programs: Vec<Program> = programs.into_values().collect();
    for program in &mut programs {
        program.attached.sort();
    }
    programs.sort();
    Ok(programs)
}

/// The program the link `id` runs and where; None where it went away or
/// the kernel would not say.
fn attached_by_link(id: u32) -> Option<(u32, String)> {
    let fd = open_by_id(BPF_LINK_GET_FD_BY_ID, id)?;
    let mut info = [0u8; LINK_INFO_HEAD];
    if !info_of(&fd, &mut info) {
        return None;
    }
    let mut name = [0u8; NAME_MAX];
    if let Some((pointer, length)) = link_name_at(&info) {
        // Asked again with a buffer where this link type reads one.
        let mut again = [0u8; LINK_INFO_HEAD];
        again[pointer..pointer + 8].copy_from_slice(&(name.as_mut_ptr() as u64).to_ne_bytes());
        again[length..length + 4].copy_from_slice(&(NAME_MAX as u32).to_ne_bytes());
        if info_of(&fd, &mut again) {
            info = again;
        }
    }
    link_from_info(&info, &name_in(&name)).ok()
}

/// Programs attached to perf events without a link: each perf event
/// descriptor a process holds, asked which program runs on it.
fn attached_by_perf_events() -> Vec<(u32, String)> {
    let mut found = Vec::new();
    let Ok(processes) = std::fs::read_dir("/proc") else {
        return found;
    };
    for process in processes.filter_map(Result::ok) {
        let Some(pid) = process
            .file_name()
            .to_str()
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(process.path().join("fd")) else {
            continue;
        };
        for fd in fds.filter_map(Result::ok) {
            let is_perf = std::fs::read_link(fd.path())
                .is_ok_and(|target| target.as_os_str() == "anon_inode:[perf_event]");
            let number = fd.file_name().to_str().and_then(|n| n.parse::<u32>().ok());
            if let (true, Some(number)) = (is_perf, number) {
                found.extend(query_perf_fd(pid, number));
            }
        }
    }
    found
}

/// BPF_TASK_FD_QUERY on descriptor `fd` of `pid`: the program on it and
/// where; None where no program runs on it.
fn query_perf_fd(pid: u32, fd: u32) -> Option<(u32, String)> {
    let mut name = [0u8; NAME_MAX];
    let mut attr = [0u8; 48];
    attr[0..4].copy_from_slice(&pid.to_ne_bytes());
    attr[4..8].copy_from_slice(&fd.to_ne_bytes());
    attr[12..16].copy_from_slice(&(NAME_MAX as u32).to_ne_bytes());
    attr[16..24].copy_from_slice(&(name.as_mut_ptr() as u64).to_ne_bytes());
    if bpf(BPF_TASK_FD_QUERY, &mut attr) != 0 {
        return None;
    }
    Some((
        word(&attr, 24),
        attach_from_fd_query(word(&attr, 28), &name_in(&name)),
    ))
}

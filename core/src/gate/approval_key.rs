//! [`ApprovalKey`]: the secret a pending call is signed with (HMAC-SHA256 over the token, the
//! tool, the user, the canonical arguments and the expiry), kept by the application, by a
//! file store beside its file, or drawn per registry; and the tokens pending calls wait under.

use std::fmt;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use hmac::{KeyInit, Mac};

use super::pending::{PendingCall, expiry_millis};

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

/// The largest key file read: a key is 64 hex digits and a newline; an application's own may be
/// longer, but not by much.
pub(crate) const MAX_KEY_FILE_BYTES: u64 = 1024;

/// The secret that binds pending calls to their content. Give one to
/// [`RegistryBuilder::approval_key`](crate::RegistryBuilder::approval_key) (at least 32 random
/// bytes), or let the store keep one ([`JsonFileApprovals`](super::JsonFileApprovals) makes one beside its file), or let
/// the registry draw one per process (enough for an in-memory store).
#[derive(Clone)]
pub struct ApprovalKey(pub(super) Arc<[u8]>);

impl ApprovalKey {
    /// A key from secret bytes.
    pub fn new(secret: impl AsRef<[u8]>) -> Self {
        Self(Arc::from(secret.as_ref()))
    }

    /// A key of its own for `purpose`, derived from this one (HMAC-SHA256 of the purpose):
    /// what another part of the application signs with, so that one shared secret serves a
    /// fleet without two uses of it ever meeting.
    pub fn derive(&self, purpose: &str) -> [u8; 32] {
        let mut mac = <HmacSha256 as KeyInit>::new_from_slice(&self.0)
            .expect("HMAC takes keys of any length");
        mac.update(b"tool-registry/derived-key/");
        mac.update(purpose.as_bytes());
        mac.finalize().into_bytes().into()
    }

    /// 32 fresh random bytes.
    pub(crate) fn random() -> Result<Self, String> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes)
            .map_err(|e| format!("no randomness for an approval key: {e}"))?;
        Ok(Self::new(bytes))
    }

    fn mac(&self, token: &str, call: &PendingCall) -> HmacSha256 {
        let mut mac = <HmacSha256 as KeyInit>::new_from_slice(&self.0)
            .expect("HMAC takes keys of any length");
        // Every field is length-prefixed, so no two different calls give the same input.
        let mut field = |bytes: &[u8]| {
            mac.update(&(bytes.len() as u64).to_le_bytes());
            mac.update(bytes);
        };
        field(b"tool-registry pending call v1");
        field(token.as_bytes());
        field(call.tool.as_bytes());
        match &call.user {
            Some(user) => {
                field(b"user");
                field(user.as_bytes());
            }
            None => field(b"anonymous"),
        }
        field(call.arguments.as_bytes());
        field(&expiry_millis(call.expires_at).to_le_bytes());
        mac
    }

    /// The MAC of `call` under `token`, in hex.
    pub(crate) fn sign(&self, token: &str, call: &PendingCall) -> String {
        hex(&self.mac(token, call).finalize().into_bytes())
    }

    /// Whether `call.mac` is this key's MAC of `call` under `token` (compared in constant time).
    pub(crate) fn verify(&self, token: &str, call: &PendingCall) -> bool {
        unhex(&call.mac).is_some_and(|mac| self.mac(token, call).verify_slice(&mac).is_ok())
    }

    /// The key in `path`, or a new one written there with mode 0600 if there is none. Two
    /// processes racing to create it agree: the file appears complete or not at all, and the
    /// loser reads the winner's.
    pub(super) fn load_or_create(path: &Path) -> Result<Self, String> {
        if let Some(key) = Self::load(path)? {
            return Ok(key);
        }
        let dir = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        let failed = |e: std::io::Error| {
            format!(
                "cannot create the approval key file {}: {e}",
                path.display()
            )
        };
        std::fs::create_dir_all(dir).map_err(failed)?;
        let key = Self::random()?;
        // A temporary file is private (0600) from its creation on.
        let mut tmp = tempfile::Builder::new()
            .prefix(".approval-key.")
            .tempfile_in(dir)
            .map_err(failed)?;
        writeln!(tmp, "{}", hex(&key.0)).map_err(failed)?;
        tmp.as_file().sync_all().map_err(failed)?;
        match tmp.persist_noclobber(path) {
            Ok(_) => Ok(key),
            Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => Self::load(path)?
                .ok_or_else(|| format!("the approval key file {} vanished", path.display())),
            Err(e) => Err(failed(e.error)),
        }
    }

    /// The key in `path`, `None` when there is no file. Only a regular file of at most
    /// [`MAX_KEY_FILE_BYTES`] is read (a link to `/dev/zero` or a FIFO is refused at once), and
    /// its mode is read from the handle it was read from.
    fn load(path: &Path) -> Result<Option<Self>, String> {
        let read = crate::store::read_regular(path, "approval key file", MAX_KEY_FILE_BYTES)
            .map_err(|e| e.to_string())?;
        let Some((bytes, meta)) = read else {
            return Ok(None);
        };
        let text = String::from_utf8_lossy(&bytes);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = meta.permissions().mode();
            if mode & 0o077 != 0 {
                return Err(format!(
                    "the approval key file {} can be read by others (mode {:o}); `chmod 600` it",
                    path.display(),
                    mode & 0o777
                ));
            }
        }
        #[cfg(not(unix))]
        let _ = meta;
        match unhex(text.trim()) {
            Some(bytes) if bytes.len() >= 32 => Ok(Some(Self::new(bytes))),
            _ => Err(format!(
                "the approval key file {} does not hold a key (64 or more hex digits); remove it and a new one is made (pending approvals are then refused)",
                path.display()
            )),
        }
    }
}

impl fmt::Debug for ApprovalKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApprovalKey(..)")
    }
}

/// A fresh, unguessable token: 128 random bits in hex.
pub(crate) fn new_token() -> Result<String, String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| format!("no randomness for an approval token: {e}"))?;
    Ok(hex(&bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.is_ascii() {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}

//! Human confirmation: calls of `requires_confirmation` tools wait for a person's approval.
//!
//! A pending call is kept under a random token and carries a keyed MAC (HMAC-SHA256) over the
//! token, the tool, the user, the canonical arguments and the expiry. A store may be a file that
//! people and other programs can edit; what runs is only ever what the registry signed.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hmac::{KeyInit, Mac};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::store::{JsonFile, StoreError};

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

/// A call waiting for approval, bound to its tool, its user and its exact arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingCall {
    /// The tool.
    pub tool: String,
    /// The user who made the call (`None` for an anonymous caller).
    pub user: Option<String>,
    /// The validated arguments in canonical form (object keys sorted, no whitespace).
    pub arguments: String,
    /// When the token stops being valid.
    #[serde(with = "humantime_serde_compat")]
    pub expires_at: SystemTime,
    /// The registry's HMAC-SHA256 over the token and the fields above, in hex; a call whose
    /// MAC does not verify is refused ([`ToolError::ApprovalAltered`](crate::ToolError)).
    #[serde(default)]
    pub mac: String,
}

/// The secret that binds pending calls to their content. Give one to
/// [`RegistryBuilder::approval_key`](crate::RegistryBuilder::approval_key) (at least 32 random
/// bytes), or let the store keep one ([`JsonFileApprovals`] makes one beside its file), or let
/// the registry draw one per process (enough for an in-memory store).
#[derive(Clone)]
pub struct ApprovalKey(Arc<[u8]>);

impl ApprovalKey {
    /// A key from secret bytes.
    pub fn new(secret: impl AsRef<[u8]>) -> Self {
        Self(Arc::from(secret.as_ref()))
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
    fn load_or_create(path: &Path) -> Result<Self, String> {
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

    fn load(path: &Path) -> Result<Option<Self>, String> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(format!(
                    "cannot read the approval key file {}: {e}",
                    path.display()
                ));
            }
        };
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(path)
                .map_err(|e| format!("cannot inspect {}: {e}", path.display()))?
                .permissions()
                .mode();
            if mode & 0o077 != 0 {
                return Err(format!(
                    "the approval key file {} can be read by others (mode {:o}); `chmod 600` it",
                    path.display(),
                    mode & 0o777
                ));
            }
        }
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

/// Where pending calls wait. `take` must remove atomically, so that a token runs at most once.
pub trait ApprovalStore: Send + Sync {
    /// Stores a pending call under `token`.
    fn put(&self, token: &str, call: PendingCall) -> Result<(), String>;
    /// The pending call of `token`, left in place.
    fn get(&self, token: &str) -> Result<Option<PendingCall>, String>;
    /// Removes and returns the pending call of `token`. Of any number of concurrent takes of
    /// one token, in any number of processes sharing the store, one gets it.
    fn take(&self, token: &str) -> Result<Option<PendingCall>, String>;
    /// The key this store's pending calls are signed with, when the store keeps one (the file
    /// store keeps one beside its file, for every process that uses the file). `None` (the
    /// default): the registry's own key.
    fn key(&self) -> Result<Option<ApprovalKey>, String> {
        Ok(None)
    }
}

/// The default store: in memory.
#[derive(Default)]
pub struct InMemoryApprovals {
    pending: Mutex<HashMap<String, PendingCall>>,
}

impl InMemoryApprovals {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl ApprovalStore for InMemoryApprovals {
    fn put(&self, token: &str, call: PendingCall) -> Result<(), String> {
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(token.to_owned(), call);
        Ok(())
    }

    fn get(&self, token: &str) -> Result<Option<PendingCall>, String> {
        Ok(self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(token)
            .cloned())
    }

    fn take(&self, token: &str) -> Result<Option<PendingCall>, String> {
        Ok(self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(token))
    }
}

/// Pending calls in a JSON file, so that approval can happen in another process (the
/// `toolreg approve` command). Every change is a locked read-modify-write of the file (see
/// [`store`](crate::store)), so concurrent processes lose no token and a token is taken once.
///
/// The signing key is kept in `<file>.key` beside it (mode 0600), made on first use, unless the
/// application gives one ([`RegistryBuilder::approval_key`](crate::RegistryBuilder::approval_key)).
/// Whoever can write the approvals file but cannot read the key cannot make a call run.
pub struct JsonFileApprovals {
    file: JsonFile,
    key_path: PathBuf,
    key: OnceLock<ApprovalKey>,
}

/// The approvals file's layout.
#[derive(Default, Serialize, Deserialize)]
struct ApprovalsFile {
    #[serde(default)]
    version: u32,
    #[serde(default)]
    pending: BTreeMap<String, PendingCall>,
    /// Keys this version does not know, kept as they are.
    #[serde(flatten)]
    other: Map<String, Value>,
}

impl JsonFileApprovals {
    /// A store in `path`, created on first use.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        let mut key_name = path.file_name().unwrap_or_default().to_os_string();
        key_name.push(".key");
        Self {
            key_path: path.with_file_name(key_name),
            file: JsonFile::new(path, "approvals file"),
            key: OnceLock::new(),
        }
    }

    /// Where the signing key is kept when the application gives none: `<file>.key`.
    pub fn key_path(&self) -> &Path {
        &self.key_path
    }

    fn update<R>(
        &self,
        change: impl FnOnce(&mut BTreeMap<String, PendingCall>) -> R,
    ) -> Result<R, String> {
        self.file
            .update(|doc: &mut ApprovalsFile| {
                doc.version = 1;
                Ok::<_, StoreError>(change(&mut doc.pending))
            })
            .map_err(|e| e.to_string())
    }
}

impl ApprovalStore for JsonFileApprovals {
    fn put(&self, token: &str, call: PendingCall) -> Result<(), String> {
        let now = SystemTime::now();
        self.update(|pending| {
            pending.retain(|_, call| call.expires_at > now);
            pending.insert(token.to_owned(), call);
        })
    }

    fn get(&self, token: &str) -> Result<Option<PendingCall>, String> {
        let doc: ApprovalsFile = self.file.read().map_err(|e| e.to_string())?;
        Ok(doc.pending.get(token).cloned())
    }

    fn take(&self, token: &str) -> Result<Option<PendingCall>, String> {
        self.update(|pending| pending.remove(token))
    }

    fn key(&self) -> Result<Option<ApprovalKey>, String> {
        if let Some(key) = self.key.get() {
            return Ok(Some(key.clone()));
        }
        let key = ApprovalKey::load_or_create(&self.key_path)?;
        Ok(Some(self.key.get_or_init(|| key).clone()))
    }
}

/// An expiry as whole milliseconds since the Unix epoch: what the file keeps of it.
pub(crate) fn expiry_millis(at: SystemTime) -> u64 {
    let since = at.duration_since(UNIX_EPOCH).unwrap_or_default();
    u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
}

/// `at` cut to whole milliseconds, so that it reads back from a file unchanged.
pub(crate) fn to_millis(at: SystemTime) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(expiry_millis(at))
}

/// The canonical text of arguments: object keys sorted at every level, no whitespace.
pub(crate) fn canonical(value: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut entries: Vec<_> = map.iter().collect();
                entries.sort_by(|a, b| a.0.cmp(b.0));
                Value::Object(
                    entries
                        .into_iter()
                        .map(|(k, v)| (k.clone(), sorted(v)))
                        .collect(),
                )
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(value).to_string()
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

mod humantime_serde_compat {
    use std::time::SystemTime;

    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(ts: &SystemTime, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&humantime::format_rfc3339_millis(*ts))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SystemTime, D::Error> {
        let text = String::deserialize(d)?;
        humantime::parse_rfc3339_weak(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call() -> PendingCall {
        PendingCall {
            tool: "t".into(),
            user: Some("u".into()),
            arguments: r#"{"a":1}"#.into(),
            expires_at: to_millis(SystemTime::now() + Duration::from_secs(60)),
            mac: String::new(),
        }
    }

    #[test]
    fn canonical_sorts_keys_at_every_level() {
        let a: Value =
            serde_json::from_str(r#"{"b": 1, "a": {"y": [1, {"d": 2, "c": 3}], "x": null}}"#)
                .unwrap();
        assert_eq!(
            canonical(&a),
            r#"{"a":{"x":null,"y":[1,{"c":3,"d":2}]},"b":1}"#
        );
    }

    #[test]
    fn file_store_round_trips_and_takes_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = JsonFileApprovals::new(dir.path().join("approvals.json"));
        let call = call();
        store.put("tok", call.clone()).unwrap();
        let again = JsonFileApprovals::new(dir.path().join("approvals.json"));
        assert_eq!(
            again.get("tok").unwrap().as_ref(),
            Some(&call),
            "get leaves it"
        );
        assert_eq!(again.take("tok").unwrap(), Some(call));
        assert_eq!(again.take("tok").unwrap(), None);
    }

    #[test]
    fn the_mac_binds_every_field_and_the_token() {
        let key = ApprovalKey::new([7u8; 32]);
        let mut signed = call();
        signed.mac = key.sign("tok", &signed);
        assert!(key.verify("tok", &signed));
        assert!(!key.verify("other", &signed));
        assert!(!ApprovalKey::new([8u8; 32]).verify("tok", &signed));
        let altered: [fn(&mut PendingCall); 6] = [
            |c| c.tool = "t2".into(),
            |c| c.user = None,
            |c| c.user = Some("v".into()),
            |c| c.arguments = r#"{"a":2}"#.into(),
            |c| c.expires_at += Duration::from_millis(1),
            |c| c.mac.clear(),
        ];
        for alter in altered {
            let mut call = signed.clone();
            alter(&mut call);
            assert!(!key.verify("tok", &call), "{call:?}");
        }
    }

    #[test]
    fn the_key_file_is_made_once_private_and_shared() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("approvals.json");
        let keys: Vec<ApprovalKey> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| s.spawn(|| JsonFileApprovals::new(&path).key().unwrap().unwrap()))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(
            keys.iter().all(|k| k.0 == keys[0].0),
            "every racer reads the winner's key"
        );
        assert!(keys[0].0.len() >= 32);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let key_path = dir.path().join("approvals.json.key");
            let mode = std::fs::metadata(&key_path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
            std::fs::set_permissions(&key_path, std::fs::Permissions::from_mode(0o644)).unwrap();
            let error = JsonFileApprovals::new(&path).key().unwrap_err();
            assert!(error.contains("chmod 600"), "{error}");
        }
    }
}

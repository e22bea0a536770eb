//! Where calls of `requires_confirmation` tools wait for a person's approval: [`PendingCall`],
//! [`ApprovalStore`] in memory or in a JSON file, and the canonical text of arguments a call is
//! bound to.
//!
//! A pending call is kept under a random token and carries a keyed MAC (HMAC-SHA256) over the
//! token, the tool, the user, the canonical arguments and the expiry. A store may be a file that
//! people and other programs can edit; what runs is only ever what the registry signed.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::ApprovalKey;
use super::pending::{PendingCall, expiry_millis};
use crate::store::{JsonFile, StoreError};

/// Where pending calls wait. `take` must remove atomically, so that a token runs at most once.
///
/// An `Err` is the store's failure (unreachable, unreadable), said so that a person can act on
/// it; the call it concerns does not run.
#[async_trait::async_trait]
pub trait ApprovalStore: Send + Sync {
    /// Stores a pending call under `token`.
    async fn put(&self, token: &str, call: PendingCall) -> Result<(), String>;
    /// The pending call of `token`, left in place.
    async fn get(&self, token: &str) -> Result<Option<PendingCall>, String>;
    /// Removes and returns the pending call of `token`. Of any number of concurrent takes of
    /// one token, in any number of processes sharing the store, one gets it. A store whose data
    /// can be put back from an earlier copy must remember the tokens it handed out until they
    /// expire, as [`JsonFileApprovals`] does, so that no token is handed out twice.
    async fn take(&self, token: &str) -> Result<Option<PendingCall>, String>;
    /// The key this store's pending calls are signed with, when the store keeps one (the file
    /// store keeps one beside its file, for every process that uses the file). `None` (the
    /// default): the registry's own key.
    async fn key(&self) -> Result<Option<ApprovalKey>, String> {
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

#[async_trait::async_trait]
impl ApprovalStore for InMemoryApprovals {
    async fn put(&self, token: &str, call: PendingCall) -> Result<(), String> {
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(token.to_owned(), call);
        Ok(())
    }

    async fn get(&self, token: &str) -> Result<Option<PendingCall>, String> {
        Ok(self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(token)
            .cloned())
    }

    async fn take(&self, token: &str) -> Result<Option<PendingCall>, String> {
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
///
/// Every token taken (approved or denied) is recorded in `<file>.used` beside the key (mode
/// 0600), under the approvals file's lock and before the call can run, until the token's
/// signed expiry; a token found there is never handed out again. So an approvals file rolled
/// back to an earlier copy, which still holds the token and its valid MAC, cannot run a call a
/// second time. Both paths are beside the path as given (not beside a link's target), where
/// the key is trusted to be.
pub struct JsonFileApprovals {
    file: JsonFile,
    key_path: PathBuf,
    used: JsonFile,
    key: OnceLock<ApprovalKey>,
}

/// The record of used tokens: each token with the expiry its pending call was signed with, in
/// milliseconds since the Unix epoch. Past that expiry an approval is refused anyway, so the
/// entry is dropped.
#[derive(Default, Serialize, Deserialize)]
struct UsedTokens {
    #[serde(default)]
    version: u32,
    #[serde(default)]
    used: BTreeMap<String, u64>,
    /// Keys this version does not know, kept as they are.
    #[serde(flatten)]
    other: Map<String, Value>,
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
        let beside = |suffix: &str| {
            let mut name = path.file_name().unwrap_or_default().to_os_string();
            name.push(suffix);
            path.with_file_name(name)
        };
        Self {
            key_path: beside(".key"),
            used: JsonFile::new(beside(".used"), "used-token record").private(),
            file: JsonFile::new(path, "approvals file"),
            key: OnceLock::new(),
        }
    }

    /// Where the signing key is kept when the application gives none: `<file>.key`.
    pub fn key_path(&self) -> &Path {
        &self.key_path
    }

    /// Where the tokens already taken are recorded until they expire: `<file>.used`.
    pub fn used_path(&self) -> &Path {
        self.used.path()
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

#[async_trait::async_trait]
impl ApprovalStore for JsonFileApprovals {
    async fn put(&self, token: &str, call: PendingCall) -> Result<(), String> {
        let now = crate::audit::wall_now();
        self.update(|pending| {
            pending.retain(|_, call| call.expires_at > now);
            pending.insert(token.to_owned(), call);
        })
    }

    async fn get(&self, token: &str) -> Result<Option<PendingCall>, String> {
        let doc: ApprovalsFile = self.file.read().map_err(|e| e.to_string())?;
        Ok(doc.pending.get(token).cloned())
    }

    /// Takes the pending call under the approvals file's lock, and records the token as used
    /// before letting go of the lock: a token already recorded (from a copy of the file put
    /// back) is removed and not handed out. When the record cannot be written, nothing is taken
    /// and the call does not run.
    async fn take(&self, token: &str) -> Result<Option<PendingCall>, String> {
        let now = expiry_millis(crate::audit::wall_now());
        self.file
            .update(|doc: &mut ApprovalsFile| {
                doc.version = 1;
                let Some(call) = doc.pending.remove(token) else {
                    return Ok(None);
                };
                let first = self.used.update(|record: &mut UsedTokens| {
                    record.version = 1;
                    record.used.retain(|_, expiry| *expiry > now);
                    let first = !record.used.contains_key(token);
                    if first {
                        record
                            .used
                            .insert(token.to_owned(), expiry_millis(call.expires_at));
                    }
                    Ok::<_, StoreError>(first)
                })?;
                Ok::<_, StoreError>(first.then_some(call))
            })
            .map_err(|e| e.to_string())
    }

    async fn key(&self) -> Result<Option<ApprovalKey>, String> {
        if let Some(key) = self.key.get() {
            return Ok(Some(key.clone()));
        }
        let key = ApprovalKey::load_or_create(&self.key_path)?;
        Ok(Some(self.key.get_or_init(|| key).clone()))
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use serde_json::json;

    use super::*;
    use crate::gate::pending::{canonical, to_millis};

    /// The store's answer, waited for here: the file stores do their work when polled.
    fn now<T>(work: impl std::future::Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime")
            .block_on(work)
    }

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
        now(store.put("tok", call.clone())).unwrap();
        let again = JsonFileApprovals::new(dir.path().join("approvals.json"));
        assert_eq!(
            now(again.get("tok")).unwrap().as_ref(),
            Some(&call),
            "get leaves it"
        );
        assert_eq!(now(again.take("tok")).unwrap(), Some(call));
        assert_eq!(now(again.take("tok")).unwrap(), None);
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
                .map(|_| s.spawn(|| now(JsonFileApprovals::new(&path).key()).unwrap().unwrap()))
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
            let error = now(JsonFileApprovals::new(&path).key()).unwrap_err();
            assert!(error.contains("chmod 600"), "{error}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_key_file_that_is_a_device_or_a_fifo_is_refused_at_once() {
        use crate::store::tests::{mkfifo, within};

        let dir = tempfile::tempdir().unwrap();
        let zero = dir.path().join("zero.json");
        std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero.json.key")).unwrap();
        let fifo = dir.path().join("fifo.json");
        mkfifo(&dir.path().join("fifo.json.key"));
        for (path, found) in [(zero, "a character device"), (fifo, "a FIFO")] {
            let error = within(move || now(JsonFileApprovals::new(path).key())).unwrap_err();
            assert!(
                error.contains("approval key file") && error.contains(found),
                "{error}"
            );
        }
        // A key file longer than any key.
        let long = dir.path().join("long.json");
        let key = dir.path().join("long.json.key");
        std::fs::write(&key, "ab".repeat(1000)).unwrap();
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        let error = now(JsonFileApprovals::new(long).key()).unwrap_err();
        assert!(error.contains("larger than 1024 bytes"), "{error}");
    }

    #[test]
    fn a_token_taken_once_is_not_handed_out_again_from_a_rolled_back_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("approvals.json");
        let store = JsonFileApprovals::new(&path);
        let call = call();
        now(store.put("tok", call.clone())).unwrap();
        now(store.put("other", call.clone())).unwrap();
        let copy = std::fs::read(&path).unwrap();
        assert_eq!(now(store.take("tok")).unwrap(), Some(call.clone()));

        std::fs::write(&path, &copy).unwrap();
        let again = JsonFileApprovals::new(&path);
        assert!(
            now(again.get("tok")).unwrap().is_some(),
            "the copy holds it"
        );
        assert_eq!(now(again.take("tok")).unwrap(), None, "but it was used");
        assert!(
            now(again.get("tok")).unwrap().is_none(),
            "and is dropped from the file"
        );
        assert_eq!(
            now(again.take("other")).unwrap(),
            Some(call),
            "others are untouched"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(store.used_path())
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert_eq!(store.used_path(), dir.path().join("approvals.json.used"));
    }

    #[test]
    fn used_tokens_are_kept_until_their_expiry_then_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let store = JsonFileApprovals::new(dir.path().join("approvals.json"));
        let expired = PendingCall {
            expires_at: to_millis(SystemTime::now() - Duration::from_secs(1)),
            ..call()
        };
        now(store.put("old", expired)).unwrap();
        now(store.take("old")).unwrap().expect("taken");
        let new = call();
        now(store.put("new", new.clone())).unwrap();
        now(store.take("new")).unwrap().expect("taken");
        let record: Value =
            serde_json::from_slice(&std::fs::read(store.used_path()).unwrap()).unwrap();
        let used = record["used"].as_object().unwrap();
        assert!(!used.contains_key("old"), "past its expiry: {record}");
        assert_eq!(
            used["new"],
            json!(expiry_millis(new.expires_at)),
            "kept until its signed expiry: {record}"
        );
    }

    #[test]
    fn a_token_is_not_taken_when_its_use_cannot_be_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let store = JsonFileApprovals::new(dir.path().join("approvals.json"));
        let call = call();
        now(store.put("tok", call.clone())).unwrap();
        std::fs::create_dir(store.used_path()).unwrap();
        let error = now(store.take("tok")).unwrap_err();
        assert!(error.contains("used-token record"), "{error}");
        assert_eq!(now(store.get("tok")).unwrap(), Some(call), "left in place");
    }
}

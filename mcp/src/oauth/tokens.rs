//! Where a module's registration and tokens are kept: [`TokenFile`], and the store every
//! authorization manager of one module shares.

use std::path::Path;
use std::sync::Arc;

use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use tool_registry_core::store::JsonFile;

/// A client's registration and tokens in a JSON file that only its owner may read or write
/// (mode `0600` on Unix when it creates it), kept as the registry's shared files are
/// ([`JsonFile`]): replaced whole on each save under a lock, so that a reader never sees half
/// of one and processes that save at once lose nothing; a path that is not a regular file (a
/// FIFO, a device) is refused, never waited on. Several processes may share one file; each then
/// refreshes on its own (a fleet's Redis store refreshes once for all).
#[derive(Clone, Debug)]
pub struct TokenFile {
    file: JsonFile,
}

impl TokenFile {
    /// The file at `path` (created, with its folders, on the first save).
    pub fn new(path: impl AsRef<Path>) -> Self {
        Self {
            file: JsonFile::new(path.as_ref(), "OAuth token file").private(),
        }
    }

    /// Runs `work` on the file on a blocking thread.
    async fn on_file<T: Send + 'static>(
        &self,
        work: impl FnOnce(&JsonFile) -> Result<T, tool_registry_core::store::StoreError>
        + Send
        + 'static,
    ) -> Result<T, AuthError> {
        let file = self.file.clone();
        tokio::task::spawn_blocking(move || work(&file))
            .await
            .map_err(|error| AuthError::InternalError(error.to_string()))?
            .map_err(|error| AuthError::InternalError(error.to_string()))
    }
}

#[async_trait::async_trait]
impl CredentialStore for TokenFile {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.on_file(|file| file.read::<Option<StoredCredentials>>())
            .await
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.on_file(move |file| {
            file.update(|kept: &mut Option<StoredCredentials>| {
                *kept = Some(credentials);
                Ok(())
            })
        })
        .await
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.on_file(|file| {
            file.update(|kept: &mut Option<StoredCredentials>| {
                *kept = None;
                Ok(())
            })
        })
        .await
    }
}

/// rmcp's stores are owned; ours is shared by every manager one module makes.
pub(super) struct SharedStore(pub(super) Arc<dyn CredentialStore>);

#[async_trait::async_trait]
impl CredentialStore for SharedStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.0.load().await
    }
    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.0.save(credentials).await
    }
    async fn clear(&self) -> Result<(), AuthError> {
        self.0.clear().await
    }
    async fn on_refresh_token_rejected(
        &self,
        credentials: &StoredCredentials,
    ) -> Result<(), AuthError> {
        self.0.on_refresh_token_rejected(credentials).await
    }
    async fn acquire_refresh_guard(
        &self,
    ) -> Result<Option<rmcp::transport::auth::CredentialRefreshGuard>, AuthError> {
        self.0.acquire_refresh_guard().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_token_file_is_owner_only_and_replaced_whole() {
        let dir = std::env::temp_dir().join(format!("toolreg-tokens-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let file = TokenFile::new(dir.join("remote.json"));
        assert!(file.load().await.unwrap().is_none());
        let stored = StoredCredentials::new("client-1".into(), None, vec!["read".into()], Some(7));
        file.save(stored.clone()).await.unwrap();
        file.save(StoredCredentials::new(
            "client-2".into(),
            None,
            vec![],
            None,
        ))
        .await
        .unwrap();
        assert_eq!(file.load().await.unwrap().unwrap().client_id, "client-2");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.join("remote.json"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| !name.ends_with(".lock"))
            .collect();
        assert_eq!(left, ["remote.json"], "no temporary file is left");
        // A FIFO in its place is refused at once, never waited on.
        #[cfg(unix)]
        {
            let fifo = dir.join("fifo.json");
            let made = std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap();
            assert!(made.success());
            let refused = TokenFile::new(&fifo).load().await.unwrap_err();
            assert!(refused.to_string().contains("fifo"), "{refused}");
        }
        file.clear().await.unwrap();
        assert!(file.load().await.unwrap().is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

//! The command line's async runtime: one runtime per run, made on first use, ended without
//! waiting for what a timed-out blocking tool still does. A command that answers one request
//! runs on the current thread; a server (`serve`, `mcp`) on a worker per core, so that its
//! connections are served in parallel.

use std::io::Write;

thread_local! {
    /// The runtime of the command line's run on this thread: one for the whole command, so
    /// that what one step starts (the HTTP client's connections) serves the next.
    static RUNTIME: std::cell::RefCell<Option<std::rc::Rc<tokio::runtime::Runtime>>> =
        const { std::cell::RefCell::new(None) };
    /// Whether this run's runtime, when made, has a worker per core.
    static SERVING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Makes this thread's next runtime one with a worker per core (a server's); called before
/// the command's first [`block_on`].
pub(super) fn serve_on_every_core() {
    SERVING.with(|serving| serving.set(true));
}

/// Runs a future on the command's runtime with timers (made on first use).
pub(crate) fn block_on<F: std::future::Future>(
    err: &mut dyn Write,
    future: F,
) -> Option<F::Output> {
    let runtime = RUNTIME.with(|slot| {
        let mut slot = slot.borrow_mut();
        if slot.is_none() {
            let mut builder = match SERVING.with(std::cell::Cell::get) {
                // Only a server (`http`, `mcp`) asks for every core.
                #[cfg(feature = "http")]
                true => tokio::runtime::Builder::new_multi_thread(),
                _ => tokio::runtime::Builder::new_current_thread(),
            };
            match builder.enable_all().build() {
                Ok(runtime) => *slot = Some(std::rc::Rc::new(runtime)),
                Err(error) => return Err(error),
            }
        }
        Ok(slot.clone())
    });
    match runtime {
        Ok(Some(runtime)) => Some(runtime.block_on(future)),
        Ok(None) => None,
        Err(error) => {
            let _ = writeln!(err, "error: cannot start the async runtime: {error}");
            None
        }
    }
}

/// Ends the command's runtime without waiting: a blocking tool that timed out may still be
/// running, and the answer does not wait for it.
pub(super) struct RuntimeGuard;

impl Drop for RuntimeGuard {
    fn drop(&mut self) {
        let runtime = RUNTIME.with(|slot| slot.borrow_mut().take());
        SERVING.with(|serving| serving.set(false));
        if let Some(runtime) = runtime.and_then(|rc| std::rc::Rc::try_unwrap(rc).ok()) {
            runtime.shutdown_background();
        }
    }
}

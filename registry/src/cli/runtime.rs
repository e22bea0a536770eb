//! The command line's async runtime: one current-thread runtime per run, made on first use,
//! ended without waiting for what a timed-out blocking tool still does.

use std::io::Write;

thread_local! {
    /// The runtime of the command line's run on this thread: one for the whole command, so
    /// that what one step starts (the HTTP client's connections) serves the next.
    static RUNTIME: std::cell::RefCell<Option<std::rc::Rc<tokio::runtime::Runtime>>> =
        const { std::cell::RefCell::new(None) };
}

/// Runs a future on the command's current-thread runtime with timers (made on first use).
pub(crate) fn block_on<F: std::future::Future>(
    err: &mut dyn Write,
    future: F,
) -> Option<F::Output> {
    let runtime = RUNTIME.with(|slot| {
        let mut slot = slot.borrow_mut();
        if slot.is_none() {
            match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
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
        if let Some(runtime) = runtime.and_then(|rc| std::rc::Rc::try_unwrap(rc).ok()) {
            runtime.shutdown_background();
        }
    }
}

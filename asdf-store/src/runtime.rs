//! The runtime the asynchronous client runs on, behind a blocking API.

use std::future::Future;
use std::sync::OnceLock;

use crate::StoreError;

static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();

fn runtime() -> Result<&'static tokio::runtime::Runtime, StoreError> {
    if let Some(rt) = RUNTIME.get() {
        return Ok(rt);
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("asdf-store")
        .enable_all()
        .build()
        .map_err(StoreError::Runtime)?;
    // Another thread may have won the race; its runtime is used and this one dropped.
    Ok(RUNTIME.get_or_init(|| rt))
}

/// Runs `fut` to completion from synchronous code. Called from inside another tokio runtime
/// (where blocking on it would panic), the future is driven from a separate thread.
pub(crate) fn block_on<F, T>(fut: F) -> Result<T, StoreError>
where
    F: Future<Output = Result<T, StoreError>> + Send,
    T: Send,
{
    let rt = runtime()?;
    if tokio::runtime::Handle::try_current().is_ok() {
        std::thread::scope(|s| {
            s.spawn(|| rt.block_on(fut))
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p))
        })
    } else {
        rt.block_on(fut)
    }
}

/// Runs `fut` on the runtime's workers, in the background.
pub(crate) fn spawn<F>(fut: F) -> Result<tokio::task::JoinHandle<F::Output>, StoreError>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    Ok(runtime()?.spawn(fut))
}

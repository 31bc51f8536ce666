package io.github.ratelimit.redis;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.jspecify.annotations.Nullable;

/**
 * Ends futures that outlive their deadline, as {@link CompletableFuture#orTimeout} and
 * {@link CompletableFuture#completeOnTimeout} do, on a timer of the store's own. The JDK's shared timer removes the
 * deadline of a future that completes in time from its queue under a lock, on the thread that completes it: for a
 * Redis answer, Lettuce's event loop, which must never wait for a lock. Here a cancelled deadline stays queued, doing
 * nothing when its time comes, and cancelling it takes no lock.
 */
final class Deadlines implements AutoCloseable {

	private final ScheduledThreadPoolExecutor timer;

	Deadlines(String threadName) {
		this.timer = new ScheduledThreadPoolExecutor(1, (task) -> {
			Thread thread = new Thread(task, threadName);
			thread.setDaemon(true);
			return thread;
		});
		this.timer.setRemoveOnCancelPolicy(false);
	}

	/** Fail the future with a {@link TimeoutException} unless it completes within the given time. */
	<T> CompletableFuture<T> failAfter(CompletableFuture<T> future, long nanos) {
		return end(future, nanos, () -> future.completeExceptionally(new TimeoutException()));
	}

	/** Complete the future with the given value unless it completes otherwise within the given time. */
	<T> CompletableFuture<T> completeAfter(CompletableFuture<T> future, @Nullable T value, long nanos) {
		return end(future, nanos, () -> future.complete(value));
	}

	private <T> CompletableFuture<T> end(CompletableFuture<T> future, long nanos, Runnable ending) {
		if (future.isDone()) {
			return future;
		}
		ScheduledFuture<?> deadline;
		try {
			deadline = this.timer.schedule(ending, Math.max(0, nanos), TimeUnit.NANOSECONDS);
		}
		catch (RuntimeException ex) {
			// Closed: the store fails what it is still asked, and this future ends now.
			ending.run();
			return future;
		}
		future.whenComplete((result, failure) -> deadline.cancel(false));
		return future;
	}

	@Override
	public void close() {
		this.timer.shutdownNow();
	}

}

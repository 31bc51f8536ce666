package io.github.ratelimit.conformance;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Runs a task on many threads released together, so that they contend as much as possible.
 */
public final class ConcurrentTestHarness {

	private ConcurrentTestHarness() {
	}

	public static void run(int threads, ThrowingRunnable task) {
		ExecutorService executor = Executors.newFixedThreadPool(threads);
		CountDownLatch ready = new CountDownLatch(threads);
		CountDownLatch start = new CountDownLatch(1);
		try {
			List<Future<?>> futures = new ArrayList<>();
			for (int i = 0; i < threads; i++) {
				futures.add(executor.submit(() -> {
					ready.countDown();
					start.await();
					task.run();
					return null;
				}));
			}
			ready.await();
			start.countDown();
			for (Future<?> future : futures) {
				future.get(2, TimeUnit.MINUTES);
			}
		}
		catch (Exception ex) {
			throw new IllegalStateException("Concurrent task failed", ex);
		}
		finally {
			executor.shutdownNow();
		}
	}

	@FunctionalInterface
	public interface ThrowingRunnable {

		void run() throws Exception;

	}

}

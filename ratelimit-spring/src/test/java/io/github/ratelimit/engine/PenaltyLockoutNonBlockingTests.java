package io.github.ratelimit.engine;

import java.lang.reflect.Method;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import io.github.ratelimit.web.MockRateLimitRequest;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;

/**
 * Every test of {@link PenaltyLockoutTests} through the engine's non-blocking methods, for a request that names an
 * executor for blocking work, as WebFlux does: lock-outs are made there, never on the calling thread.
 */
class PenaltyLockoutNonBlockingTests extends PenaltyLockoutTests {

	private final ExecutorService executor = Executors.newSingleThreadExecutor();

	@AfterEach
	void stopExecutor() {
		this.executor.shutdownNow();
	}

	@Override
	@Nullable RateLimitOutcome decideMethod(Method method, Object[] arguments, MockRateLimitRequest request) {
		request.setApplicationCodeExecutor(this.executor);
		return this.engine.decideMethodAsync(method, Api.class, arguments, request).toCompletableFuture().join();
	}

	@Override
	void settle(RateLimitOutcome outcome, MockRateLimitRequest request, Method method, Object result) {
		this.engine.settlement().settleAsync(outcome, request, method, result, null).toCompletableFuture().join();
	}

}

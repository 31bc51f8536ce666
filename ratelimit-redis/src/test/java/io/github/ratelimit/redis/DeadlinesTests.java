package io.github.ratelimit.redis;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class DeadlinesTests {

	private final Deadlines deadlines = new Deadlines("deadlines-test");

	@AfterEach
	void close() {
		this.deadlines.close();
	}

	@Test
	void aFutureThatDoesNotCompleteInTimeFailsWithATimeout() {
		CompletableFuture<String> future = this.deadlines.failAfter(new CompletableFuture<>(),
				TimeUnit.MILLISECONDS.toNanos(20));
		assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> future.get(10, TimeUnit.SECONDS))
			.withCauseInstanceOf(TimeoutException.class);
	}

	@Test
	void aFutureThatDoesNotCompleteInTimeCompletesWithTheGivenValue() throws Exception {
		CompletableFuture<String> future = this.deadlines.completeAfter(new CompletableFuture<>(), "late",
				TimeUnit.MILLISECONDS.toNanos(20));
		assertThat(future.get(10, TimeUnit.SECONDS)).isEqualTo("late");
	}

	@Test
	void aFutureCompletedInTimeKeepsItsResult() throws Exception {
		CompletableFuture<String> future = this.deadlines.failAfter(new CompletableFuture<>(),
				TimeUnit.MILLISECONDS.toNanos(20));
		future.complete("answer");
		Thread.sleep(60);
		assertThat(future.get()).isEqualTo("answer");
	}

	@Test
	void afterCloseAFutureEndsAtOnce() throws Exception {
		this.deadlines.close();
		CompletableFuture<String> future = this.deadlines.completeAfter(new CompletableFuture<>(), "closed",
				TimeUnit.HOURS.toNanos(1));
		assertThat(future.getNow("not yet")).isEqualTo("closed");
	}

}

package io.github.ratelimit.limiter;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;

import io.github.ratelimit.Decision;
import io.github.ratelimit.FailureMode;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.conformance.MutableTimeSource;
import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.PartialStoreFailureException;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.store.Reservation;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Every test of {@link RateLimiterTests}, decided through {@link RateLimiter#tryAcquireAllAsync}; then what only the
 * non-blocking path has: a store that answers later, on another thread, while no thread waits for it.
 */
class RateLimiterNonBlockingTests extends RateLimiterTests {

	private final MutableTimeSource time = MutableTimeSource.at("2030-01-01T00:00:00Z");

	private final DeferredStore deferred = new DeferredStore(
			InMemoryRateLimitStore.builder().clock(this.time).maxKeys(1000).build());

	private final RateLimitPolicy policy = RateLimitPolicy.builder("deferred").limit(2).window(Duration.ofMinutes(1))
		.build();

	@Override
	Admission acquireAll(RateLimiter limiter, List<Acquisition> acquisitions) {
		return limiter.tryAcquireAllAsync(acquisitions).toCompletableFuture().join();
	}

	@Override
	void refund(Admission admission, int... indexes) {
		admission.refundAsync(indexes).toCompletableFuture().join();
	}

	@Test
	void theDecisionCompletesWhenTheStoreAnswersAndNoThreadWaitsMeanwhile() {
		RateLimiter limiter = RateLimiter.builder(this.deferred).clock(this.time).denyCache(true).build();
		this.time.alignTo(Duration.ofMinutes(1), 1_000);
		List<CompletableFuture<Admission>> admissions = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			admissions.add(limiter.tryAcquireAllAsync(List.of(new Acquisition(this.policy, "k", 1)))
				.toCompletableFuture());
		}
		assertThat(admissions).noneMatch(CompletableFuture::isDone);
		this.deferred.answerAll();
		assertThat(admissions).extracting((admission) -> admission.join().allowed()).containsExactly(true, true, false);
		CompletableFuture<Admission> cached = limiter
			.tryAcquireAllAsync(List.of(new Acquisition(this.policy, "k", 1)))
			.toCompletableFuture();
		assertThat(cached).as("a denial the store gave is cached, answered without it").isDone();
		assertThat(cached.join().decision(0).origin()).isEqualTo(Decision.Origin.DENY_CACHE);
	}

	@Test
	void aFailureThatArrivesLaterIsDecidedByTheFailureModeAndCountsForTheBreaker() {
		RateLimiter limiter = RateLimiter.builder(this.deferred).clock(this.time).failureThreshold(2).build();
		RateLimitPolicy closed = RateLimitPolicy.builder("closed").limit(2).window(Duration.ofMinutes(1))
			.failureMode(FailureMode.DENY).build();
		for (int i = 0; i < 2; i++) {
			CompletableFuture<Admission> admission = limiter
				.tryAcquireAllAsync(List.of(new Acquisition(closed, "k", 1)))
				.toCompletableFuture();
			this.deferred.failAll(new RateLimitStoreException("Redis did not answer within 200ms"));
			assertThat(admission.join().decision(0).origin()).isEqualTo(Decision.Origin.FAIL_CLOSED);
		}
		assertThat(limiter.isCircuitOpen()).isTrue();
		int asked = this.deferred.asked;
		assertThat(limiter.tryAcquireAllAsync(List.of(new Acquisition(closed, "k", 1))).toCompletableFuture())
			.as("the open circuit answers at once, without the store")
			.isCompletedWithValueMatching((admission) -> !admission.allowed());
		assertThat(this.deferred.asked).isEqualTo(asked);
	}

	@Test
	void aProgrammingErrorFailsTheStageAndLeavesNoProbeTaken() {
		RateLimiter limiter = RateLimiter.builder(this.deferred).clock(this.time).failureThreshold(1)
			.openDuration(Duration.ofSeconds(1)).build();
		CompletableFuture<Admission> failed = limiter.tryAcquireAllAsync(List.of(new Acquisition(this.policy, "k", 1)))
			.toCompletableFuture();
		this.deferred.failAll(new RateLimitStoreException("down"));
		failed.join();
		this.time.advance(Duration.ofSeconds(2));
		CompletableFuture<Admission> probe = limiter.tryAcquireAllAsync(List.of(new Acquisition(this.policy, "k", 1)))
			.toCompletableFuture();
		this.deferred.failAll(new IllegalArgumentException("not a policy this store can enforce"));
		assertThatExceptionOfType(CompletionException.class).isThrownBy(probe::join)
			.withCauseInstanceOf(IllegalArgumentException.class);
		CompletableFuture<Admission> next = limiter.tryAcquireAllAsync(List.of(new Acquisition(this.policy, "k", 1)))
			.toCompletableFuture();
		assertThat(this.deferred.pending()).as("the probe was released, so the next request probes").isOne();
		this.deferred.answerAll();
		assertThat(next.join().allowed()).isTrue();
	}

	@Test
	void whatARejectedRequestsHealthyPartsTookIsGivenBackBeforeItsStageCompletes() {
		RateLimiter limiter = RateLimiter.builder(this.deferred).clock(this.time).denyCache(false).build();
		RateLimitPolicy shared = RateLimitPolicy.builder("account").limit(1_000).window(Duration.ofHours(1))
			.failureMode(FailureMode.DENY).build();
		this.time.alignTo(Duration.ofMinutes(1), 1_000);
		CompletableFuture<Admission> admission = limiter.tryAcquireAllAsync(
				List.of(new Acquisition(this.policy, "203.0.113.7", 1), new Acquisition(shared, "application", 1)))
			.toCompletableFuture();
		// The per-address part decides; the shared quota's part fails, and its policy fails closed.
		this.deferred.answerPartly("application");
		assertThat(admission).as("waits for the per-address unit to be given back").isNotDone();
		assertThat(this.deferred.refunds()).isOne();
		this.deferred.answerAll();
		Admission rejected = admission.join();
		assertThat(rejected.allowed()).isFalse();
		assertThat(rejected.decision(1).origin()).isEqualTo(Decision.Origin.FAIL_CLOSED);
		assertThat(this.deferred.delegate.tryAcquire(this.policy, "203.0.113.7", 1).remaining())
			.as("nothing stayed taken").isEqualTo(1);
	}

	/**
	 * A store that answers only when the test says so, as a remote store answers on its I/O thread: its non-blocking
	 * methods return stages that the test completes.
	 */
	static final class DeferredStore implements RateLimitStore {

		final InMemoryRateLimitStore delegate;

		private final List<Runnable> pending = new ArrayList<>();

		private int refunds;

		int asked;

		DeferredStore(InMemoryRateLimitStore delegate) {
			this.delegate = delegate;
		}

		@Override
		public CompletionStage<Reservation> tryAcquireAllAsync(List<Acquisition> acquisitions) {
			this.asked++;
			CompletableFuture<Reservation> answer = new CompletableFuture<>();
			this.pending.add(new Answer(acquisitions, answer));
			return answer;
		}

		@Override
		public CompletionStage<Void> refundAllAsync(List<Acquisition> acquisitions, long[] countedAtMillis) {
			this.refunds++;
			CompletableFuture<Void> given = new CompletableFuture<>();
			this.pending.add(() -> {
				this.delegate.refundAll(acquisitions, countedAtMillis);
				given.complete(null);
			});
			return given;
		}

		int pending() {
			return this.pending.size();
		}

		int refunds() {
			return this.refunds;
		}

		/** Answer every waiting call, in order, from the in-memory store. */
		void answerAll() {
			drain((call) -> call.run());
		}

		void failAll(RuntimeException failure) {
			drain((call) -> ((Answer) call).result.completeExceptionally(failure));
		}

		/** Answer every waiting decision but the acquisitions of {@code failingKey}, which fail, as a Cluster node. */
		void answerPartly(String failingKey) {
			drain((call) -> {
				Answer answer = (Answer) call;
				Decision[] decisions = new Decision[answer.acquisitions.size()];
				long[] times = new long[decisions.length];
				for (int i = 0; i < decisions.length; i++) {
					Acquisition acquisition = answer.acquisitions.get(i);
					if (!acquisition.key().equals(failingKey)) {
						Reservation one = this.delegate.tryAcquireAll(List.of(acquisition));
						decisions[i] = one.decisions().get(0);
						times[i] = one.countedAt(0);
					}
				}
				answer.result.completeExceptionally(new PartialStoreFailureException(decisions, times,
						new RateLimitStoreException("node down")));
			});
		}

		private void drain(Consumer<Runnable> action) {
			List<Runnable> calls = new ArrayList<>(this.pending);
			this.pending.clear();
			// Completed on another thread, as a remote store's answers arrive on its I/O thread.
			Thread thread = new Thread(() -> calls.forEach(action));
			thread.start();
			try {
				thread.join();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

		@Override
		public Decision tryAcquire(RateLimitPolicy policy, String key, long cost) {
			throw new AssertionError("the non-blocking path never asks the blocking one");
		}

		@Override
		public Reservation tryAcquireAll(List<Acquisition> acquisitions) {
			throw new AssertionError("the non-blocking path never asks the blocking one");
		}

		@Override
		public void refundAll(List<Acquisition> acquisitions, long[] countedAtMillis) {
			throw new AssertionError("the non-blocking path never asks the blocking one");
		}

		@Override
		public long currentTimeMillis() {
			return this.delegate.currentTimeMillis();
		}

		@Override
		public void reset(RateLimitPolicy policy, String key) {
			this.delegate.reset(policy, key);
		}

		private final class Answer implements Runnable {

			final List<Acquisition> acquisitions;

			final CompletableFuture<Reservation> result;

			Answer(List<Acquisition> acquisitions, CompletableFuture<Reservation> result) {
				this.acquisitions = acquisitions;
				this.result = result;
			}

			@Override
			public void run() {
				this.result.complete(DeferredStore.this.delegate.tryAcquireAll(this.acquisitions));
			}

		}

	}

}

package io.github.ratelimit.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tenants' limits that a client cannot dislodge: a known tenant keeps its last answer while its source hangs or a
 * flood of invented names fills the lookups, the flood costs the source a bounded number of calls, and an unknown
 * name is asked again only after the time to live. Freshness runs on an injected clock; a source call's deadline on
 * real time, which the tests only wait for.
 */
class RateLimitTenantsTests {

	private static final Duration TIME_TO_LIVE = Duration.ofMinutes(1);

	private final AtomicLong now = new AtomicLong();

	private final Map<String, Long> limits = Map.of("acme", 3L, "globex", 6L);

	/** Every call to the source, by tenant, in order. */
	private final List<String> calls = new CopyOnWriteArrayList<>();

	private final CountDownLatch release = new CountDownLatch(1);

	private RateLimitTenants tenants;

	@AfterEach
	void close() {
		this.release.countDown();
		if (this.tenants != null) {
			this.tenants.close();
		}
	}

	@Test
	void aKnownTenantKeepsItsLimitsWhileItsSourceHangsAndThePoolStillLooksUpOthers() throws Exception {
		// A source that hangs for acme once it is known, ignoring interrupts as a socket read without a timeout does.
		this.tenants = tenants(Duration.ofMillis(500), 1, (policy, tenant) -> {
			this.calls.add(tenant);
			if (tenant.equals("acme") && this.calls.stream().filter("acme"::equals).count() > 1) {
				awaitUninterruptibly(this.release);
			}
			return known(tenant);
		});
		assertThat(limitOf("acme")).isEqualTo(3);
		this.now.addAndGet(TIME_TO_LIVE.toNanos());
		for (int i = 0; i < 20; i++) {
			assertThat(this.tenants.lookup("reports", "acme")).as("answered at once, by the last answer")
				.isCompletedWithValueMatching((resolved) -> resolved.limits.limit() == 3);
		}
		awaitCalls(2);
		assertThat(this.calls).as("one refresh at a time, however many requests").containsExactly("acme", "acme");
		assertThat(eventuallyLimitOf("globex")).as("past the deadline, the hung call's thread was replaced")
			.isEqualTo(6);
		assertThat(this.tenants.lookup("reports", "acme").getNow(null).limits.limit()).isEqualTo(3);
	}

	@Test
	void aFloodOfInventedNamesCostsTheSourceABoundedNumberOfCallsAndMovesNoKnownTenant() throws Exception {
		// One thread, so that the calls are recorded in the order the queues give them out: with two, one thread may
		// record several queued names while the other, which took acme's refresh first, has not recorded it yet.
		int threads = 1;
		this.tenants = tenants(Duration.ofMinutes(1), threads, (policy, tenant) -> {
			this.calls.add(tenant);
			if (tenant.startsWith("invented-")) {
				awaitUninterruptibly(this.release); // a source slower than the flood
			}
			return known(tenant);
		});
		assertThat(limitOf("acme")).isEqualTo(3);
		this.now.addAndGet(TIME_TO_LIVE.toNanos());
		List<String> accepted = new ArrayList<>();
		for (int i = 0; i < 10_000; i++) {
			if (!this.tenants.lookup("reports", "invented-" + i).isCompletedExceptionally()) {
				accepted.add("invented-" + i);
			}
			if (i == 5_000) {
				assertThat(this.tenants.lookup("reports", "acme"))
					.as("a known tenant, stale, is answered at once by its limits in the midst of the flood")
					.isCompletedWithValueMatching((resolved) -> resolved.limits.limit() == 3);
			}
		}
		assertThat(accepted).as("at most the threads and the first lookups' queue; the others refused at once")
			.hasSizeLessThanOrEqualTo(threads + RateLimitTenants.FIRST_QUEUE);
		this.release.countDown();
		awaitNoLookupPending();
		assertThat(this.calls).as("the flood cost the source the lookups accepted, plus acme's two")
			.hasSize(accepted.size() + 2);
		assertThat(this.calls.lastIndexOf("acme")).as("acme's refresh ran ahead of the queued names")
			.isEqualTo(threads + 1);
		// Each name looked up is remembered as unknown for the time to live: asking again costs nothing.
		for (String name : accepted) {
			assertThat(this.tenants.lookup("reports", name)).isCompleted();
		}
		assertThat(this.calls).hasSize(accepted.size() + 2);
		assertThat(limitOf("acme")).isEqualTo(3);
	}

	@Test
	void anUnknownNameIsAskedAgainOnlyAfterTheTimeToLive() throws Exception {
		this.tenants = tenants(Duration.ofSeconds(10), 1, (policy, tenant) -> {
			this.calls.add(tenant);
			return known(tenant);
		});
		assertThat(this.tenants.lookup("reports", "initech").get(10, TimeUnit.SECONDS).limits.isDefault()).isTrue();
		awaitNoLookupPending();
		this.now.addAndGet(TIME_TO_LIVE.toNanos() - 1);
		assertThat(this.tenants.lookup("reports", "initech")).isCompleted();
		assertThat(this.calls).hasSize(1);
		this.now.addAndGet(1);
		this.tenants.lookup("reports", "initech").get(10, TimeUnit.SECONDS);
		assertThat(this.calls).hasSize(2);
	}

	@Test
	void aRefreshThatFailsLeavesTheLastAnswerAndTheNextRequestTriesAgain() throws Exception {
		this.tenants = tenants(Duration.ofSeconds(10), 1, (policy, tenant) -> {
			this.calls.add(tenant);
			if (this.calls.size() == 2) {
				throw new IllegalStateException("database down");
			}
			return TenantLimits.ofLimit(this.calls.size());
		});
		assertThat(limitOf("acme")).isEqualTo(1);
		this.now.addAndGet(TIME_TO_LIVE.toNanos());
		assertThat(this.tenants.lookup("reports", "acme").getNow(null).limits.limit()).isEqualTo(1);
		awaitNoLookupPending();
		assertThat(this.calls).hasSize(2);
		assertThat(this.tenants.lookup("reports", "acme").getNow(null).limits.limit())
			.as("the failed refresh kept the last answer").isEqualTo(1);
		awaitNoLookupPending();
		assertThat(this.calls).hasSize(3);
		assertThat(this.tenants.lookup("reports", "acme").getNow(null).limits.limit()).isEqualTo(3);
	}

	@Test
	void aFirstLookupThatHangsFailsAtItsDeadline() {
		this.tenants = tenants(Duration.ofMillis(50), 1, (policy, tenant) -> {
			awaitUninterruptibly(this.release);
			return known(tenant);
		});
		assertThatExceptionOfType(ExecutionException.class)
			.isThrownBy(() -> this.tenants.lookup("reports", "acme").get(10, TimeUnit.SECONDS));
	}

	private RateLimitTenants tenants(Duration timeout, int threads, TenantLimitsSource source) {
		return new RateLimitTenants(source, RateLimitTenants.boundedCache(100), timeout, TIME_TO_LIVE, threads,
				this.now::get);
	}

	private TenantLimits known(String tenant) {
		Long limit = this.limits.get(tenant);
		return (limit != null) ? TenantLimits.ofLimit(limit) : TenantLimits.DEFAULT;
	}

	private long limitOf(String tenant) throws Exception {
		long limit = this.tenants.lookup("reports", tenant).get(10, TimeUnit.SECONDS).limits.limit();
		awaitNoLookupPending();
		return limit;
	}

	/** A request's wait may end before a queued lookup runs: the lookup stays pending, and a later request joins it. */
	private long eventuallyLimitOf(String tenant) throws Exception {
		for (int i = 0; i < 100; i++) {
			try {
				return limitOf(tenant);
			}
			catch (ExecutionException ex) {
				// timed out waiting: ask again
			}
		}
		throw new AssertionError("never answered");
	}

	private void awaitCalls(int count) throws InterruptedException {
		for (int i = 0; i < 1_000 && this.calls.size() < count; i++) {
			Thread.sleep(10);
		}
	}

	/** Until the last lookup's answer is kept (or dropped): a lookup completes just before it is kept. */
	private void awaitNoLookupPending() throws InterruptedException {
		for (int i = 0; i < 1_000 && this.tenants.pending() > 0; i++) {
			Thread.sleep(10);
		}
	}

	private static void awaitUninterruptibly(CountDownLatch latch) {
		boolean interrupted = false;
		while (true) {
			try {
				if (latch.await(30, TimeUnit.SECONDS)) {
					break;
				}
			}
			catch (InterruptedException ex) {
				interrupted = true;
			}
		}
		if (interrupted) {
			Thread.currentThread().interrupt();
		}
	}

}

package io.github.ratelimit.engine;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

import io.github.ratelimit.RateLimitPolicy;
import org.jspecify.annotations.Nullable;

import org.springframework.cache.Cache;

/**
 * The limits of each tenant, from the application's {@link TenantLimitsSource}, cached: what the engine asks for a
 * policy with a tenant expression. Built so that neither a source that hangs nor a client naming invented tenants
 * moves a known tenant off its limits:
 * <ul>
 * <li>A known tenant (one the source gave limits of its own) is answered from its last answer, at once, always. Once
 * that answer is older than the time to live, the request that finds it starts a refresh and is decided by the last
 * answer meanwhile (stale while revalidate); a refresh that fails, times out or is refused leaves the last answer in
 * place, and the next request after it tries again. Known tenants' answers are kept apart from unknown names', so a
 * flood of names evicts none of them.</li>
 * <li>A name the source does not know (it answered {@code null} or {@link TenantLimits#DEFAULT}) is remembered as
 * unknown for the time to live: asked again only after it.</li>
 * <li>Lookups run on a small pool of their own, never on a request's thread; concurrent requests of one tenant wait
 * for one lookup, and a request waits for it at most the timeout. Refreshes of known tenants wait in a queue of
 * {@value #REFRESH_QUEUE} that the threads empty first; first lookups of other names in one of
 * {@value #FIRST_QUEUE}. A first lookup the queue refuses, or that fails or times out, is decided by the policy's
 * failure mode, and asked again on a later request.</li>
 * <li>Each source call has a deadline, the timeout: past it the call's thread is interrupted and its lookup fails. A
 * lookup that waited longer than the timeout for a thread is dropped unrun. A call that ignores the interrupt keeps
 * its thread, and the pool starts another in its place, up to as many again as it has.</li>
 * </ul>
 * So invented names cost the source at most as many queries at once as the pool has threads, each name at most one
 * per time to live, and never delay the refresh of a known tenant by more than one call in progress. A tenant longer
 * than 256 characters is not looked up. {@link #evict} drops a tenant's answers at once when its limits change.
 *
 * @since 0.3.0
 */
public final class RateLimitTenants implements AutoCloseable {

	/** Refreshes of known tenants that wait for a thread before new ones are refused. */
	static final int REFRESH_QUEUE = 1_000;

	/** First lookups of other names that wait for a thread before new ones are refused. */
	static final int FIRST_QUEUE = 100;

	/** Names remembered as unknown at most: a flood of them forgets its own, never a known tenant. */
	private static final int UNKNOWN_NAMES = 10_000;

	private final TenantLimitsSource source;

	/** Known tenants' answers. */
	private final Cache cache;

	/** Names the source does not know. */
	private final Cache unknown;

	private final long timeoutNanos;

	private final long timeToLiveNanos;

	private final LongSupplier nanoTime;

	private final int threads;

	private final ThreadPoolExecutor executor;

	/** Where each call's deadline waits: never a thread that runs a lookup, which may be the one hanging. */
	private final ScheduledThreadPoolExecutor deadlines;

	private final BlockingQueue<Lookup> refreshes = new ArrayBlockingQueue<>(REFRESH_QUEUE);

	private final BlockingQueue<Lookup> firstLookups = new ArrayBlockingQueue<>(FIRST_QUEUE);

	/** Calls past their deadline that still hold their thread. */
	private final AtomicInteger abandoned = new AtomicInteger();

	/** Lookups under way, by cache key: one per tenant and policy, however many requests wait. */
	private final ConcurrentHashMap<String, Lookup> pending = new ConcurrentHashMap<>();

	/** The policies tenants were looked up for: what {@link #evict} drops a tenant's answers of. */
	private final Set<String> policies = ConcurrentHashMap.newKeySet();

	/**
	 * Create the tenants' limits.
	 * @param source where the limits come from
	 * @param cache where known tenants' answers are kept: bounded by size (such as a {@code CaffeineCache}); an answer
	 * it expires is looked up again as a new tenant's
	 * @param timeout how long a request waits for a lookup, and a source call may take
	 * @param timeToLive how old an answer may be before it is refreshed, and how long a name the source does not know
	 * is remembered as unknown
	 * @param threads how many lookups run at once
	 */
	public RateLimitTenants(TenantLimitsSource source, Cache cache, Duration timeout, Duration timeToLive,
			int threads) {
		this(source, cache, timeout, timeToLive, threads, System::nanoTime);
	}

	RateLimitTenants(TenantLimitsSource source, Cache cache, Duration timeout, Duration timeToLive, int threads,
			LongSupplier nanoTime) {
		this.source = source;
		this.cache = cache;
		this.unknown = new ExpiringCache("ratelimit-unknown-tenants", UNKNOWN_NAMES, timeToLive);
		this.timeoutNanos = timeout.toNanos();
		this.timeToLiveNanos = timeToLive.toNanos();
		this.nanoTime = nanoTime;
		this.threads = threads;
		this.executor = new ThreadPoolExecutor(threads, 2 * threads, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
				daemons("ratelimit-tenants-"));
		this.executor.allowCoreThreadTimeOut(true);
		this.deadlines = new ScheduledThreadPoolExecutor(1, daemons("ratelimit-tenants-deadlines-"));
		this.deadlines.setRemoveOnCancelPolicy(true);
	}

	/**
	 * Return where a tenant's policy is built when a request finds its limits known but not built for the policy as
	 * it counts now (after a refresh or a change): the tenants' own timer thread, which never calls the source.
	 */
	Executor builds() {
		return this.deadlines;
	}

	private static ThreadFactory daemons(String prefix) {
		AtomicInteger count = new AtomicInteger();
		return (task) -> {
			Thread thread = new Thread(task, prefix + count.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		};
	}

	/**
	 * Return a cache for known tenants' answers when the application has no cache library: at most
	 * {@code maximumSize} answers.
	 * @param maximumSize how many answers are kept
	 * @return the cache
	 */
	public static Cache boundedCache(int maximumSize) {
		return new ExpiringCache("ratelimit-tenants", maximumSize, Duration.ofNanos(Long.MAX_VALUE));
	}

	/**
	 * Drop what is known of a tenant's limits, for every policy: its next request looks them up again. Call it when
	 * the tenant's limits change.
	 * @param tenant the tenant
	 */
	public void evict(String tenant) {
		for (String policy : this.policies) {
			String key = cacheKey(policy, tenant);
			// A lookup under way may have read the old limits: its answer is not kept.
			this.pending.remove(key);
			this.cache.evict(key);
			this.unknown.evict(key);
		}
	}

	/**
	 * Drop what is known of every tenant's limits.
	 */
	public void evictAll() {
		this.cache.clear();
		this.unknown.clear();
	}

	/**
	 * Return the cache known tenants' answers are kept in.
	 * @return the cache
	 */
	public Cache cache() {
		return this.cache;
	}

	/**
	 * Look up a tenant's limits for a policy: at once when known or remembered as unknown, else when the source
	 * answers, or exceptionally once the timeout passes, if the source fails or if the lookup is refused.
	 */
	CompletableFuture<Resolved> lookup(String policy, String tenant) {
		String key = cacheKey(policy, tenant);
		long now = this.nanoTime.getAsLong();
		Answer known = answer(this.cache, key);
		if (known != null) {
			if (now - known.fetchedAt >= this.timeToLiveNanos) {
				start(key, policy, tenant, true, now);
			}
			return CompletableFuture.completedFuture(known.resolved);
		}
		Answer unknown = answer(this.unknown, key);
		if (unknown != null && now - unknown.fetchedAt < this.timeToLiveNanos) {
			return CompletableFuture.completedFuture(unknown.resolved);
		}
		this.policies.add(policy);
		return start(key, policy, tenant, false, now).answer.copy().orTimeout(this.timeoutNanos, TimeUnit.NANOSECONDS);
	}

	private static @Nullable Answer answer(Cache cache, String key) {
		Cache.ValueWrapper cached = cache.get(key);
		return (cached != null && cached.get() instanceof Answer answer) ? answer : null;
	}

	/** The tenant's lookup under way, or a new one, queued: a lookup older than it may take is dropped. */
	private Lookup start(String key, String policy, String tenant, boolean refresh, long now) {
		Lookup lookup = new Lookup(policy, tenant, now);
		Lookup current = this.pending.putIfAbsent(key, lookup);
		if (current != null) {
			// A lookup that failed is still pending for a moment after its callers were told: not one to join.
			boolean finished = current.answer.isCompletedExceptionally();
			if ((!finished && now - current.queuedAt < 2 * this.timeoutNanos)
					|| !this.pending.replace(key, current, lookup)) {
				return current;
			}
			current.answer.completeExceptionally(new TimeoutException("dropped past its maximum age"));
		}
		lookup.answer.whenComplete((resolved, failure) -> {
			// Kept before it stops being pending, so that a request in between joins it rather than asking again.
			if (resolved != null && this.pending.get(key) == lookup) {
				keep(key, resolved);
			}
			this.pending.remove(key, lookup);
		});
		BlockingQueue<Lookup> queue = refresh ? this.refreshes : this.firstLookups;
		if (!queue.offer(lookup)) {
			lookup.answer.completeExceptionally(new RejectedExecutionException("too many tenant lookups waiting"));
			return lookup;
		}
		try {
			this.executor.execute(this::runNext);
		}
		catch (RejectedExecutionException ex) {
			queue.remove(lookup);
			lookup.answer.completeExceptionally(ex);
		}
		return lookup;
	}

	private void keep(String key, Resolved resolved) {
		Answer answer = new Answer(resolved, this.nanoTime.getAsLong());
		if (resolved.limits.isDefault()) {
			this.cache.evict(key);
			this.unknown.put(key, answer);
		}
		else {
			this.unknown.evict(key);
			this.cache.put(key, answer);
		}
	}

	/** Run the lookup that waited first, refreshes of known tenants before first lookups. */
	private void runNext() {
		Lookup lookup = this.refreshes.poll();
		if (lookup == null) {
			lookup = this.firstLookups.poll();
		}
		if (lookup == null || lookup.answer.isDone()) {
			return;
		}
		if (this.nanoTime.getAsLong() - lookup.queuedAt >= this.timeoutNanos) {
			lookup.answer.completeExceptionally(new TimeoutException("waited past the timeout for a thread"));
			return;
		}
		Lookup running = lookup;
		running.runner = Thread.currentThread();
		ScheduledFuture<?> deadline = this.deadlines.schedule(() -> expire(running), this.timeoutNanos,
				TimeUnit.NANOSECONDS);
		try {
			TenantLimits limits = this.source.limitsOf(running.policy, running.tenant);
			running.answer.complete(new Resolved((limits != null) ? limits : TenantLimits.DEFAULT));
		}
		catch (Throwable ex) {
			running.answer.completeExceptionally(ex);
		}
		finally {
			deadline.cancel(false);
			boolean wasAbandoned;
			synchronized (running) {
				running.runner = null;
				wasAbandoned = running.abandoned;
			}
			// An interrupt meant for this call must not reach the next one.
			Thread.interrupted();
			if (wasAbandoned) {
				resize(this.abandoned.decrementAndGet());
			}
		}
	}

	/** At the call's deadline: fail its lookup, interrupt it, and start a thread in its place while it hangs. */
	private void expire(Lookup lookup) {
		lookup.answer.completeExceptionally(new TimeoutException("the source did not answer in time"));
		synchronized (lookup) {
			Thread runner = lookup.runner;
			if (runner == null) {
				return;
			}
			runner.interrupt();
			lookup.abandoned = true;
		}
		resize(this.abandoned.incrementAndGet());
	}

	private synchronized void resize(int abandoned) {
		int size = this.threads + Math.min(abandoned, this.threads);
		if (size != this.executor.getCorePoolSize()) {
			this.executor.setCorePoolSize(size);
		}
	}

	/** How many lookups are under way. */
	int pending() {
		return this.pending.size();
	}

	private static String cacheKey(String policy, String tenant) {
		return policy + '\0' + tenant;
	}

	/**
	 * Stop the lookups' threads.
	 */
	@Override
	public void close() {
		this.executor.shutdownNow();
		this.deadlines.shutdownNow();
	}

	/** A source's answer and when it came. */
	private record Answer(Resolved resolved, long fetchedAt) {
	}

	/** One lookup of a tenant's limits for a policy, from when it is queued to its answer. */
	private static final class Lookup {

		final String policy;

		final String tenant;

		final long queuedAt;

		final CompletableFuture<Resolved> answer = new CompletableFuture<>();

		/** The thread calling the source, while it does. */
		@Nullable Thread runner;

		/** Whether the call outlived its deadline: its thread was replaced. */
		boolean abandoned;

		Lookup(String policy, String tenant, long queuedAt) {
			this.policy = policy;
			this.tenant = tenant;
			this.queuedAt = queuedAt;
		}

	}

	/** A tenant's limits, with the policy they give, built once per version of the policy they apply to. */
	static final class Resolved {

		final TenantLimits limits;

		private volatile @Nullable Built built;

		Resolved(TenantLimits limits) {
			this.limits = limits;
		}

		/** Whether the policy under these limits is built for the policy as it counts now: nothing left to parse. */
		boolean isBuiltFor(PolicySpec spec) {
			Built built = this.built;
			return this.limits.isDefault() || (built != null && built.base == spec.policy());
		}

		/**
		 * The policy under the tenant's limits, or {@code null} for the policy's own: built by the parser once per
		 * version of the policy (the engine has it built off the request's thread, see {@link #isBuiltFor}), and a
		 * failure kept as the result, so that invalid limits are not parsed again by every request.
		 * @param spec the policy
		 * @throws InvalidRateLimitPolicyException if the tenant's limits are invalid
		 */
		@Nullable RateLimitPolicy policy(PolicySpec spec, String tenant) {
			if (this.limits.isDefault()) {
				return null;
			}
			RateLimitPolicy base = spec.policy();
			Built built = this.built;
			if (built == null || built.base != base) {
				try {
					built = new Built(base, spec.forTenant(tenant, this.limits.values("tenant '" + tenant + "'")), null);
				}
				catch (InvalidRateLimitPolicyException | IllegalArgumentException ex) {
					built = new Built(base, null, ex);
				}
				this.built = built;
			}
			if (built.failure != null) {
				throw built.failure;
			}
			return built.policy;
		}

		private record Built(RateLimitPolicy base, @Nullable RateLimitPolicy policy,
				@Nullable RuntimeException failure) {
		}

	}

}

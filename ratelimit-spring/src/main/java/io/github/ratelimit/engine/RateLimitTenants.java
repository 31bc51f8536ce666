package io.github.ratelimit.engine;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.RateLimitPolicy;
import org.jspecify.annotations.Nullable;

import org.springframework.cache.Cache;

/**
 * The limits of each tenant, from the application's {@link TenantLimitsSource}, cached: what the engine asks for a
 * policy with a tenant expression. A lookup runs on a small pool of its own, never on a request's thread, and
 * concurrent requests of one tenant wait for one lookup; a request waits for it at most the timeout. Answers
 * (including "the policy's own limits") are kept in a Spring {@link Cache}, bounded and expiring, so that a tenant
 * costs one lookup per expiry; {@link #evict} drops a tenant's answers at once when its limits change.
 * <p>
 * A tenant comes from the request, so a client may name tenants that do not exist: each costs a lookup, at most as
 * many at once as the pool and its queue hold (the others are decided at once under the policy's own limits, or
 * answered 503 under failure mode {@code deny}), and one cache entry; only tenants the source gives limits of their
 * own count apart. A tenant longer than 256 characters is not looked up.
 *
 * @since 0.3.0
 */
public final class RateLimitTenants implements AutoCloseable {

	/** How many lookups wait for a thread before new ones are refused. */
	private static final int QUEUE = 1_000;

	private final TenantLimitsSource source;

	private final Cache cache;

	private final Duration timeout;

	private final ExecutorService executor;

	/** Lookups under way, by cache key: one per tenant and policy, however many requests wait. */
	private final ConcurrentHashMap<String, CompletableFuture<Resolved>> pending = new ConcurrentHashMap<>();

	/** The policies tenants were looked up for: what {@link #evict} drops a tenant's answers of. */
	private final Set<String> policies = ConcurrentHashMap.newKeySet();

	/**
	 * Create the tenants' limits.
	 * @param source where the limits come from
	 * @param cache where the answers are kept: bounded and expiring (such as a {@code CaffeineCache})
	 * @param timeout how long a request waits for a lookup
	 * @param threads how many lookups run at once
	 */
	public RateLimitTenants(TenantLimitsSource source, Cache cache, Duration timeout, int threads) {
		this.source = source;
		this.cache = cache;
		this.timeout = timeout;
		AtomicInteger count = new AtomicInteger();
		ThreadPoolExecutor executor = new ThreadPoolExecutor(threads, threads, 60, TimeUnit.SECONDS,
				new LinkedBlockingQueue<>(QUEUE), (task) -> {
					Thread thread = new Thread(task, "ratelimit-tenants-" + count.incrementAndGet());
					thread.setDaemon(true);
					return thread;
				});
		executor.allowCoreThreadTimeOut(true);
		this.executor = executor;
	}

	/**
	 * Return a cache for the answers when the application has no cache library: at most {@code maximumSize} answers,
	 * each kept for {@code timeToLive}.
	 * @param maximumSize how many answers are kept
	 * @param timeToLive how long an answer is kept
	 * @return the cache
	 */
	public static Cache boundedCache(int maximumSize, Duration timeToLive) {
		return new ExpiringCache("ratelimit-tenants", maximumSize, timeToLive);
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
		}
	}

	/**
	 * Drop what is known of every tenant's limits.
	 */
	public void evictAll() {
		this.cache.clear();
	}

	/**
	 * Return the cache the answers are kept in.
	 * @return the cache
	 */
	public Cache cache() {
		return this.cache;
	}

	/**
	 * Look up a tenant's limits for a policy: at once when cached, else when the source answers, or exceptionally
	 * once the timeout passes or if the source fails.
	 */
	CompletableFuture<Resolved> lookup(String policy, String tenant) {
		String key = cacheKey(policy, tenant);
		Cache.ValueWrapper cached = this.cache.get(key);
		if (cached != null && cached.get() instanceof Resolved resolved) {
			return CompletableFuture.completedFuture(resolved);
		}
		CompletableFuture<Resolved> lookup = this.pending.get(key);
		if (lookup == null) {
			this.policies.add(policy);
			CompletableFuture<Resolved> started = new CompletableFuture<>();
			lookup = this.pending.putIfAbsent(key, started);
			if (lookup == null) {
				lookup = started;
				start(key, policy, tenant, started);
			}
		}
		return lookup.copy().orTimeout(this.timeout.toNanos(), TimeUnit.NANOSECONDS);
	}

	private void start(String key, String policy, String tenant, CompletableFuture<Resolved> lookup) {
		try {
			this.executor.execute(() -> {
				try {
					TenantLimits limits = this.source.limitsOf(policy, tenant);
					lookup.complete(new Resolved((limits != null) ? limits : TenantLimits.DEFAULT));
				}
				catch (Throwable ex) {
					lookup.completeExceptionally(ex);
				}
			});
		}
		catch (RejectedExecutionException ex) {
			lookup.completeExceptionally(ex);
		}
		lookup.whenComplete((resolved, failure) -> {
			if (this.pending.remove(key, lookup) && resolved != null) {
				this.cache.put(key, resolved);
			}
		});
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
	}

	/** A tenant's limits, with the policy they give, built once per version of the policy they apply to. */
	static final class Resolved {

		final TenantLimits limits;

		private volatile @Nullable Built built;

		Resolved(TenantLimits limits) {
			this.limits = limits;
		}

		/**
		 * The policy under the tenant's limits, or {@code null} for the policy's own.
		 * @param base the policy as it counts now
		 * @param declared the policy as declared, whose window and algorithm the tenant's variant keeps its state by
		 * @throws IllegalArgumentException if the tenant's limits are invalid
		 */
		@Nullable RateLimitPolicy policy(RateLimitPolicy base, RateLimitPolicy declared, String tenant) {
			if (this.limits.isDefault()) {
				return null;
			}
			Built built = this.built;
			if (built == null || built.base != base) {
				built = new Built(base, this.limits.applyTo(base, declared, tenant));
				this.built = built;
			}
			return built.policy;
		}

		private record Built(RateLimitPolicy base, RateLimitPolicy policy) {
		}

	}

}

package io.github.ratelimit.autoconfigure;

import java.time.Duration;

/**
 * Limits per tenant from the application's TenantLimitsSource bean ({@code ratelimit.tenants}).
 */
public class TenantsProperties {

	/**
	 * Deadline of each call to the source (its thread is then interrupted), and longest a request waits for a
	 * first lookup: past it, the policy's failure mode applies (allow, local: the policy's own limits; deny: 503).
	 */
	private Duration timeout = Duration.ofMillis(200);

	/**
	 * Lookups at once, on threads of their own; refreshes of known tenants wait first (queue of 1,000), then
	 * other names (100); one that waits past the timeout is dropped, a refused one keeps the last answer.
	 */
	private int threads = 4;

	private final Cache cache = new Cache();

	public Duration getTimeout() {
		return this.timeout;
	}

	public void setTimeout(Duration timeout) {
		this.timeout = timeout;
	}

	public int getThreads() {
		return this.threads;
	}

	public void setThreads(int threads) {
		this.threads = threads;
	}

	public Cache getCache() {
		return this.cache;
	}

	/**
	 * Cache of the tenants' limits, in Caffeine when it is on the class path (else a simple bounded map).
	 */
	public static class Cache {

		/**
		 * Most known tenants' answers kept (one per tenant and policy); names the source does not know apart.
		 */
		private int maximumSize = 10_000;

		/**
		 * Age past which a known tenant's answer is refreshed, served until a refresh succeeds; also how long a
		 * name the source does not know stays unknown. RateLimitTenants.evict applies a change at once.
		 */
		private Duration timeToLive = Duration.ofMinutes(1);

		public int getMaximumSize() {
			return this.maximumSize;
		}

		public void setMaximumSize(int maximumSize) {
			this.maximumSize = maximumSize;
		}

		public Duration getTimeToLive() {
			return this.timeToLive;
		}

		public void setTimeToLive(Duration timeToLive) {
			this.timeToLive = timeToLive;
		}

	}

}

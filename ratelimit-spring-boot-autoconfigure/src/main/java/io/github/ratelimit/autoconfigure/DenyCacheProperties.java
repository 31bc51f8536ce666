package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.limiter.RateLimiter;

/**
 * Settings of the local deny cache in front of a remote store ({@code ratelimit.deny-cache}).
 */
public class DenyCacheProperties {

	/**
	 * Whether to reject locally, without a round trip, a key the store has rejected until the time it gave.
	 */
	private boolean enabled = true;

	/**
	 * Maximum number of keys remembered.
	 */
	private int maxKeys = RateLimiter.DEFAULT_DENY_CACHE_MAX_KEYS;

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public int getMaxKeys() {
		return this.maxKeys;
	}

	public void setMaxKeys(int maxKeys) {
		this.maxKeys = maxKeys;
	}

}

package io.github.ratelimit.autoconfigure;

import java.time.Duration;

import com.github.benmanes.caffeine.cache.Caffeine;

import org.springframework.cache.Cache;
import org.springframework.cache.caffeine.CaffeineCache;

/**
 * The cache of the tenants' limits in Caffeine: bounded by size, expiring after write. Loaded only when Caffeine is
 * on the class path.
 */
final class CaffeineTenantCache {

	private CaffeineTenantCache() {
	}

	static Cache create(int maximumSize, Duration timeToLive) {
		return new CaffeineCache("ratelimit-tenants",
				Caffeine.newBuilder().maximumSize(maximumSize).expireAfterWrite(timeToLive).build(), false);
	}

}

package io.github.ratelimit.autoconfigure;

import com.github.benmanes.caffeine.cache.Caffeine;

import org.springframework.cache.Cache;
import org.springframework.cache.caffeine.CaffeineCache;

/**
 * The cache of known tenants' limits in Caffeine: bounded by size alone, since an old answer is refreshed while it
 * serves. Loaded only when Caffeine is on the class path.
 */
final class CaffeineTenantCache {

	private CaffeineTenantCache() {
	}

	static Cache create(int maximumSize) {
		return new CaffeineCache("ratelimit-tenants", Caffeine.newBuilder().maximumSize(maximumSize).build(), false);
	}

}

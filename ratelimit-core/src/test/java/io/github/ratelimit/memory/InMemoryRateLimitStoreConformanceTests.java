package io.github.ratelimit.memory;

import io.github.ratelimit.TimeSource;
import io.github.ratelimit.conformance.RateLimitStoreConformanceTests;
import io.github.ratelimit.store.RateLimitStore;

class InMemoryRateLimitStoreConformanceTests extends RateLimitStoreConformanceTests {

	@Override
	protected RateLimitStore createStore(TimeSource clock) {
		return InMemoryRateLimitStore.builder().clock(clock).maxKeys(1_000_000).build();
	}

}

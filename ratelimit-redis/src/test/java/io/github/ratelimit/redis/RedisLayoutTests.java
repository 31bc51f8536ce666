package io.github.ratelimit.redis;

import com.tngtech.archunit.core.domain.JavaClasses;
import io.github.ratelimit.architecture.LayoutRules;
import org.junit.jupiter.api.Test;

class RedisLayoutTests {

	private final JavaClasses redis = LayoutRules.productionClasses("io.github.ratelimit.redis");

	@Test
	void theStoreIsTheOnlyPublicClass() {
		LayoutRules.theOnlyPublicClassIs(RedisRateLimitStore.class).check(this.redis);
	}

	@Test
	void theRedisStoreImportsNoSpringBootServletWebOrReactorTypes() {
		LayoutRules.storesAreFreeOfBootWebAndReactor().check(this.redis);
	}

	@Test
	void theRedisStoreHasNoPackageCycles() {
		LayoutRules.noPackageCycles().check(this.redis);
	}

}

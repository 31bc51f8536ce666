package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.architecture.LayoutRules;
import org.junit.jupiter.api.Test;

class AutoConfigureLayoutTests {

	@Test
	void theAutoConfigurationHasNoPackageCycles() {
		LayoutRules.noPackageCycles().check(LayoutRules.productionClasses("io.github.ratelimit"));
	}

}

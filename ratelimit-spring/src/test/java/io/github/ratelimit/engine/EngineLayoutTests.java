package io.github.ratelimit.engine;

import com.tngtech.archunit.core.domain.JavaClasses;
import io.github.ratelimit.architecture.LayoutRules;
import org.junit.jupiter.api.Test;

class EngineLayoutTests {

	private final JavaClasses engine = LayoutRules.productionClasses("io.github.ratelimit.engine",
			"io.github.ratelimit.aop", "io.github.ratelimit.web", "io.github.ratelimit.observation",
			"io.github.ratelimit.metrics");

	@Test
	void theEngineImportsNoSpringBootServletOrReactiveTypes() {
		LayoutRules.engineIsFreeOfBootAndWebStacks().check(this.engine);
	}

	@Test
	void theEngineHasNoPackageCycles() {
		LayoutRules.noPackageCycles().check(this.engine);
	}

}

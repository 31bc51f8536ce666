package io.github.ratelimit.engine;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClasses;
import io.github.ratelimit.architecture.LayoutRules;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

class EngineLayoutTests {

	private final JavaClasses engine = LayoutRules.productionClasses("io.github.ratelimit.engine",
			"io.github.ratelimit.aop", "io.github.ratelimit.web", "io.github.ratelimit.observation",
			"io.github.ratelimit.metrics");

	@Test
	void theEngineImportsNoSpringBootServletOrReactiveTypes() {
		LayoutRules.engineIsFreeOfBootAndWebStacks().check(this.engine);
	}

	/**
	 * What the engine asks while it decides (the request's scope, the planner, the outcomes, the settlement) never
	 * calls back into the engine: a request's path goes one way.
	 */
	@Test
	void nothingTheEngineCallsCallsBackIntoTheEngine() {
		noClasses().that()
			.resideInAPackage("io.github.ratelimit.engine")
			.and()
			.areNotAssignableTo(RateLimitEngine.class)
			.and()
			.areNotAssignableTo(RateLimitEngine.Builder.class)
			.should()
			.callCodeUnitWhere(DescribedPredicate.describe("a method of RateLimitEngine",
					(call) -> call.getTargetOwner().isAssignableTo(RateLimitEngine.class)))
			.check(this.engine);
	}

	@Test
	void theEngineHasNoPackageCycles() {
		LayoutRules.noPackageCycles().check(this.engine);
	}

}

package io.github.ratelimit.ai;

import com.tngtech.archunit.core.domain.JavaClasses;
import io.github.ratelimit.architecture.LayoutRules;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;

class AiLayoutTests {

	/** The advisor and its request, without their auto-configuration. */
	private final JavaClasses ai = LayoutRules.productionClasses("io.github.ratelimit.ai")
		.that(resideInAPackage("io.github.ratelimit.ai"));

	@Test
	void theChatRequestNeverCallsTheEngine() {
		LayoutRules.requestAdaptersNeverCallTheEngine().check(this.ai);
	}

	@Test
	void theAdvisorDecidesNothing() {
		LayoutRules.adaptersDecideNothing().check(this.ai);
	}

	@Test
	void theAdvisorImportsNoWebStackAndNoSpringBoot() {
		LayoutRules.adaptersAreIndependent("jakarta.servlet..", "org.springframework.web.servlet..",
				"io.github.ratelimit.webmvc..", "io.github.ratelimit.webflux..", "io.github.ratelimit.gateway..")
			.check(this.ai);
	}

	@Test
	void theModuleHasNoPackageCycles() {
		LayoutRules.noPackageCycles().check(LayoutRules.productionClasses("io.github.ratelimit.ai"));
	}

}

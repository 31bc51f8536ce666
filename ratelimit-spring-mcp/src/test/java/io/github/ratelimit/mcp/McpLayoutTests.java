package io.github.ratelimit.mcp;

import com.tngtech.archunit.core.domain.JavaClasses;
import io.github.ratelimit.architecture.LayoutRules;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;

class McpLayoutTests {

	/** The adapters, without their auto-configuration. */
	private final JavaClasses mcp = LayoutRules.productionClasses("io.github.ratelimit.mcp")
		.that(resideInAPackage("io.github.ratelimit.mcp"));

	@Test
	void theToolCallRequestNeverCallsTheEngine() {
		LayoutRules.requestAdaptersNeverCallTheEngine().check(this.mcp);
	}

	@Test
	void theMcpAdaptersDecideNothing() {
		LayoutRules.adaptersDecideNothing().check(this.mcp);
	}

	@Test
	void theMcpAdaptersImportNoWebStackAndNoSpringBoot() {
		LayoutRules.adaptersAreIndependent("jakarta.servlet..", "org.springframework.web.servlet..",
				"io.github.ratelimit.webmvc..", "io.github.ratelimit.webflux..", "io.github.ratelimit.gateway..")
			.check(this.mcp);
	}

	@Test
	void theModuleHasNoPackageCycles() {
		LayoutRules.noPackageCycles().check(LayoutRules.productionClasses("io.github.ratelimit.mcp"));
	}

}

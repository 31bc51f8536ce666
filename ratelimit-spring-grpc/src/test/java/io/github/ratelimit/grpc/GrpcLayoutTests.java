package io.github.ratelimit.grpc;

import com.tngtech.archunit.core.domain.JavaClasses;
import io.github.ratelimit.architecture.LayoutRules;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;

class GrpcLayoutTests {

	/** The adapters, without their auto-configuration. */
	private final JavaClasses grpc = LayoutRules.productionClasses("io.github.ratelimit.grpc")
		.that(resideInAPackage("io.github.ratelimit.grpc"));

	@Test
	void theGrpcRequestAdapterNeverCallsTheEngine() {
		LayoutRules.requestAdaptersNeverCallTheEngine().check(this.grpc);
	}

	@Test
	void theGrpcAdaptersDecideNothing() {
		LayoutRules.adaptersDecideNothing().check(this.grpc);
	}

	@Test
	void theGrpcAdaptersImportNoWebStackAndNoSpringBoot() {
		LayoutRules.adaptersAreIndependent("jakarta.servlet..", "org.springframework.web.servlet..",
				"org.springframework.web.server..", "io.github.ratelimit.webmvc..", "io.github.ratelimit.webflux..",
				"io.github.ratelimit.gateway..")
			.check(this.grpc);
	}

	@Test
	void theGrpcModuleHasNoPackageCycles() {
		LayoutRules.noPackageCycles().check(LayoutRules.productionClasses("io.github.ratelimit.grpc"));
	}

}

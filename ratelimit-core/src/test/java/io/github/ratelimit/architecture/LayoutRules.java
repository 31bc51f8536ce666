package io.github.ratelimit.architecture;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * The rules of the module layout, checked by each module's tests on its own classes: the core knows nothing but the
 * JDK, stores know nothing of Spring Boot, the web or Reactor, and no two packages depend on each other.
 */
public final class LayoutRules {

	private static final String[] WEB = { "jakarta.servlet..", "org.springframework.web..",
			"org.springframework.http..", "org.springframework.boot.." };

	/** The types of one web stack or another: the engine knows neither. */
	private static final String[] WEB_STACKS = { "jakarta.servlet..", "org.springframework.web.servlet..",
			"org.springframework.web.reactive..", "org.springframework.web.server..",
			"org.springframework.http.server.reactive..", "reactor.." };

	/** What decides: a web stack's adapters only hand requests to the engine. */
	private static final String[] DECIDING = { "io.github.ratelimit.limiter..", "io.github.ratelimit.store..",
			"io.github.ratelimit.memory..", "io.github.ratelimit.redis..", "io.github.ratelimit.dynamodb.." };

	private LayoutRules() {
	}

	/**
	 * Import the production classes (no tests) of this project's packages found on the classpath.
	 * @param packages the packages to import, e.g. {@code io.github.ratelimit}
	 * @return the classes
	 */
	public static JavaClasses productionClasses(String... packages) {
		return new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
			.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
			.importPackages(packages);
	}

	/**
	 * The core (model, limiter, SPI, memory store) depends on the JDK and JSpecify's annotations only: no Spring, no
	 * servlet or HTTP types, no Reactor.
	 * @return the rule
	 */
	public static ArchRule coreDependsOnTheJdkAndJSpecifyOnly() {
		return classes().should()
			.onlyDependOnClassesThat()
			.resideInAnyPackage("java..", "io.github.ratelimit..", "org.jspecify..")
			.as("the core depends on the JDK and JSpecify only");
	}

	/**
	 * A store module imports no Spring Boot, servlet, web or Reactor types.
	 * @return the rule
	 */
	public static ArchRule storesAreFreeOfBootWebAndReactor() {
		return noClasses().should()
			.dependOnClassesThat()
			.resideInAnyPackage(concat(WEB, "reactor.."))
			.as("a store imports no Spring Boot, servlet, web or Reactor types");
	}

	/**
	 * A store module's only public class is its store: everything else is its own business.
	 * @param store the store's class
	 * @return the rule
	 */
	public static ArchRule theOnlyPublicClassIs(Class<?> store) {
		return classes().that()
			.arePublic()
			.and()
			.areTopLevelClasses()
			.should()
			.be(store)
			.as("the only public class is " + store.getSimpleName());
	}

	/**
	 * The policy engine ({@code ratelimit-spring}) imports no Spring Boot type and no type of a web stack: each stack
	 * adapts its requests to it.
	 * @return the rule
	 */
	public static ArchRule engineIsFreeOfBootAndWebStacks() {
		return noClasses().should()
			.dependOnClassesThat()
			.resideInAnyPackage(concat(WEB_STACKS, "org.springframework.boot.."))
			.as("the engine imports no Spring Boot, servlet or reactive types");
	}

	/**
	 * A web stack's adapters decide nothing: they never call the limiter or a store, only the engine.
	 * @return the rule
	 */
	public static ArchRule adaptersDecideNothing() {
		return noClasses().should()
			.dependOnClassesThat()
			.resideInAnyPackage(DECIDING)
			.as("a web stack's adapters call the engine, never the limiter or a store");
	}

	/**
	 * A web stack's request adapter answers what the engine asks of the request and never calls the engine back:
	 * the client's address comes from the engine's own resolver.
	 * @return the rule
	 */
	public static ArchRule requestAdaptersNeverCallTheEngine() {
		return noClasses().that()
			.implement("io.github.ratelimit.web.RateLimitRequest")
			.should()
			.dependOnClassesThat()
			.haveNameMatching("io\\.github\\.ratelimit\\.engine\\.(RateLimitEngine|RateLimitSettlement|ClientIps)(\\$.*)?")
			.as("a request adapter never calls the engine back");
	}

	/**
	 * A web stack's adapters import no other stack's, and no Spring Boot type.
	 * @param otherStacks the packages of the other stacks' adapters and types
	 * @return the rule
	 */
	public static ArchRule adaptersAreIndependent(String... otherStacks) {
		return noClasses().should()
			.dependOnClassesThat()
			.resideInAnyPackage(concat(otherStacks, "org.springframework.boot.."))
			.as("a web stack's adapters import no other stack and no Spring Boot type");
	}

	/**
	 * No package depends, directly or through others, on a package that depends on it.
	 * @return the rule
	 */
	public static ArchRule noPackageCycles() {
		return slices().assignedFrom(new SliceAssignment() {

			@Override
			public SliceIdentifier getIdentifierOf(JavaClass javaClass) {
				return javaClass.getPackageName().startsWith("io.github.ratelimit")
						? SliceIdentifier.of(javaClass.getPackageName()) : SliceIdentifier.ignore();
			}

			@Override
			public String getDescription() {
				return "every package of io.github.ratelimit";
			}

		}).should().beFreeOfCycles();
	}

	private static String[] concat(String[] first, String last) {
		String[] all = java.util.Arrays.copyOf(first, first.length + 1);
		all[first.length] = last;
		return all;
	}

}
